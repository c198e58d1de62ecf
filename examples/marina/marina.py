"""The harbour office of a small marina as a rods environment (docs/guides/environments.md).

Berths (slips and mooring balls) on a few docks, the boats that use them and their owners' accounts,
transient berth bookings from reservation to check-out, the boatyard's service orders (travel-lift
jobs, pump-outs, engine work) and fuel-dock sales. The public attributes are the state; the
constructor takes that state as keyword arguments and derives from it the next free booking,
service-order and fuel-sale numbers. `today` is part of the state, so every call gives the same answer.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from datetime import date as Date, timedelta
from types import MappingProxyType
from typing import Literal, get_args

from rods.envs import tool

Service = Literal["haul-out", "launch", "short-haul", "pump-out", "bottom-paint", "engine-service",
                  "rigging-inspection"]
Fuel = Literal["diesel", "gasoline"]
PaymentMethod = Literal["card", "cash", "check"]
BookingStatus = Literal["reserved", "in-berth", "departed", "cancelled"]
OrderStatus = Literal["scheduled", "done", "cancelled"]

SERVICES = get_args(Service)
FUELS = get_args(Fuel)
PAYMENT_METHODS = get_args(PaymentMethod)
BOOKING_STATUSES = get_args(BookingStatus)
ORDER_STATUSES = get_args(OrderStatus)
#: What each yard service costs: dollars per foot of boat length, or a flat price.
PER_FOOT_PRICES = MappingProxyType({"haul-out": 12.0, "launch": 10.0, "short-haul": 8.0, "bottom-paint": 40.0})
FLAT_PRICES = MappingProxyType({"pump-out": 25.0, "engine-service": 285.0, "rigging-inspection": 175.0})
#: Jobs that need the travel lift, and what the lift can take.
LIFT_SERVICES = ("haul-out", "launch", "short-haul", "bottom-paint")
LIFT_JOBS_PER_DAY = 3
LIFT_MAX_LENGTH_FT = 50.0
LIFT_MAX_BEAM_FT = 16.0
SERVICE_HORIZON_DAYS = 60          # the yard books no further ahead than this
#: Fuel-dock prices per gallon.
FUEL_PRICES = MappingProxyType({"diesel": 5.18, "gasoline": 5.56})
MAX_FUEL_GALLONS = 300.0
#: Share of transient berth charges taken off by the owner's tier.
TIER_DISCOUNTS = MappingProxyType({"visitor": 0.0, "seasonal": 0.10, "club": 0.15})
MAX_STAY_NIGHTS = 14               # longest transient booking
DEPTH_CLEARANCE_FT = 1.0           # water under the keel required at low tide
LATE_CANCEL_DAYS = 2               # cancelling fewer days ahead than this costs one night (club members excepted)
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ACTIVE = ("reserved", "in-berth")


def _words(text: str) -> list[str]:
    """Lower-case words of a name, accents and apostrophes dropped ("Seán O'Malley" -> ["sean", "omalley"])."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", plain.replace("'", ""))


def _matches(query: str, name: str) -> bool:
    """Every word of the query starts a word of the name."""
    names = _words(name)
    return all(any(n.startswith(w) for n in names) for w in _words(query))


class Marina:
    """A marina's berths, boats, owners' accounts, berth bookings, yard orders and fuel sales, seen from the office."""

    def __init__(self, today: str = "2026-06-11", berths: dict[str, dict] | None = None,
                 owners: dict[str, dict] | None = None, boats: dict[str, dict] | None = None,
                 bookings: dict[str, dict] | None = None, service_orders: dict[str, dict] | None = None,
                 fuel_sales: dict[str, dict] | None = None) -> None:
        self._date(today, "today")
        self.today = today
        # berth id ("B-06") -> {"dock", "kind": "transient" | "seasonal", "type": "slip" | "mooring",
        #     "max_length_ft", "max_beam_ft", "depth_ft", "shore_power": "none" | "30A" | "50A",
        #     "rate_per_ft" (dollars per foot of boat a night), "status": "open" | "out-of-service",
        #     "seasonal_boat" (the boat holding a seasonal berth, else None), "notes"}
        self.berths: dict[str, dict] = copy.deepcopy(berths or {})
        # owner id ("OW-4104") -> {"name", "phone", "email", "tier": "visitor" | "seasonal" | "club",
        #     "balance" (dollars owed), "notes"}
        self.owners: dict[str, dict] = copy.deepcopy(owners or {})
        # boat id ("V-3107") -> {"name", "owner_id", "type", "length_ft", "beam_ft", "draft_ft",
        #     "fuel": "diesel" | "gasoline", "registration"}
        self.boats: dict[str, dict] = copy.deepcopy(boats or {})
        # booking id ("BK-7401") -> {"boat_id", "berth_id", "arrival", "departure", "status"}
        #     (+ "cancellation_fee" once cancelled; "nights", "charges", "total" once departed)
        self.bookings: dict[str, dict] = copy.deepcopy(bookings or {})
        # order id ("SO-9104") -> {"boat_id", "service", "date", "status", "price", "notes"}
        self.service_orders: dict[str, dict] = copy.deepcopy(service_orders or {})
        # sale id ("FS-5502") -> {"boat_id", "date", "fuel", "gallons", "price_per_gallon", "amount"}
        self.fuel_sales: dict[str, dict] = copy.deepcopy(fuel_sales or {})
        self._next_booking = 1 + max((int(k.split("-")[1]) for k in self.bookings), default=7400)
        self._next_order = 1 + max((int(k.split("-")[1]) for k in self.service_orders), default=9100)
        self._next_sale = 1 + max((int(k.split("-")[1]) for k in self.fuel_sales), default=5500)

    # -- looking things up ---------------------------------------------------------------------------------

    @tool("read")
    def get_today(self) -> dict:
        """Tell today's date in the office system and its weekday.

        Returns:
            The date as YYYY-MM-DD and the name of the weekday.
        """
        return {"today": self.today, "weekday": WEEKDAY_NAMES[self._date(self.today, "today").weekday()]}

    @tool("read")
    def find_boater(self, name: str | None = None, phone: str | None = None,
                    boat_name: str | None = None) -> list[dict]:
        """Look up a boat owner by their name, phone number or the name of their boat.

        Give at least one; all that are given must match.

        Args:
            name: The owner's name or part of it, such as 'Salcedo' or 'Colleen M'; case and accents do not matter.
            phone: Their phone number or its last 4 or more digits, in any format.
            boat_name: The name of one of their boats or part of it, such as 'Kestrel'.

        Returns:
            Every matching owner (possibly none): id, name, contact details, tier, balance owed and notes; their
            boats with dimensions, fuel and seasonal berth; and their reserved or current berth bookings.
        """
        if not any((name, phone, boat_name)):
            raise ValueError("Give a name, a phone number or a boat name to search by.")
        digits = re.sub(r"\D", "", phone or "")
        if phone and len(digits) < 4:
            raise ValueError(f"Phone {phone!r}: give at least the last 4 digits.")
        found = []
        for oid, owner in sorted(self.owners.items()):
            if name and not _matches(name, owner["name"]):
                continue
            if digits and not re.sub(r"\D", "", owner["phone"]).endswith(digits):
                continue
            if boat_name and not any(b["owner_id"] == oid and _matches(boat_name, b["name"])
                                     for b in self.boats.values()):
                continue
            found.append(self._owner_record(oid))
        return found

    @tool("read")
    def search_open_berths(self, boat_id: str, arrival: str, departure: str, dock: str | None = None) -> dict:
        """Find the transient berths a boat fits that are free for a stay, with their prices.

        A boat fits a berth when it is no longer and no wider than the berth takes and the berth's depth at low
        tide leaves at least a foot under its keel. Seasonal berths and berths out of service are never offered.

        Args:
            boat_id: The boat's id, such as 'V-3108'.
            arrival: The first night's date as YYYY-MM-DD, today or later.
            departure: The day the boat leaves as YYYY-MM-DD, after the arrival.
            dock: Only berths on this dock, such as 'B'.

        Returns:
            The number of nights and, for each free berth that fits (cheapest first), its dock, type, shore power,
            depth, the price a night for this boat and for the whole stay before any discount.
        """
        boat = self._boat(boat_id)
        nights = self._stay(arrival, departure)
        docks = sorted({b["dock"] for b in self.berths.values()})
        if dock is not None and dock not in docks:
            raise ValueError(f"There is no dock {dock!r}; docks: {', '.join(docks)}.")
        rows = []
        for bid, berth in sorted(self.berths.items()):
            if dock is not None and berth["dock"] != dock:
                continue
            if berth["kind"] != "transient" or berth["status"] != "open" or self._misfit(boat, berth):
                continue
            if self._clash(bid, arrival, departure):
                continue
            nightly = self._nightly(bid, boat_id)
            rows.append({"berth_id": bid, "dock": berth["dock"], "type": berth["type"],
                         "shore_power": berth["shore_power"], "depth_ft": berth["depth_ft"],
                         "max_length_ft": berth["max_length_ft"], "nightly_rate": nightly,
                         "stay_price": round(nightly * nights, 2)})
        rows.sort(key=lambda r: (r["nightly_rate"], r["berth_id"]))
        return {"boat_id": boat_id, "boat": boat["name"], "arrival": arrival, "departure": departure,
                "nights": nights, "berths": rows}

    @tool("read")
    def list_bookings(self, boat_id: str | None = None, berth_id: str | None = None,
                      arrival_date: str | None = None, status: BookingStatus | None = None) -> list[dict]:
        """List berth bookings by boat, berth, arrival day or status.

        The filters given combine; with none, every booking on file. Sorted by arrival day.

        Args:
            boat_id: Only this boat's bookings, such as 'V-3107'.
            berth_id: Only bookings of this berth, such as 'T-01'.
            arrival_date: Only bookings arriving on this day, as YYYY-MM-DD.
            status: Only bookings in this status.

        Returns:
            Each booking with its boat's and owner's names, its berth and dates, the price a night and the
            estimated total of the stay.
        """
        if boat_id is not None:
            self._boat(boat_id)
        if berth_id is not None:
            self._berth(berth_id)
        if arrival_date is not None:
            self._date(arrival_date, "arrival_date")
        if status is not None and status not in BOOKING_STATUSES:
            raise ValueError(f"Status {status!r} is not one of: {', '.join(BOOKING_STATUSES)}.")
        rows = [self._booking_record(bid) for bid, b in self.bookings.items()
                if (boat_id is None or b["boat_id"] == boat_id)
                and (berth_id is None or b["berth_id"] == berth_id)
                and (arrival_date is None or b["arrival"] == arrival_date)
                and (status is None or b["status"] == status)]
        return sorted(rows, key=lambda r: (r["arrival"], r["booking_id"]))

    @tool("read")
    def list_service_orders(self, date: str | None = None, boat_id: str | None = None,
                            status: OrderStatus | None = None) -> list[dict]:
        """List the boatyard's service orders by day, boat or status.

        The filters given combine; with none, every order on file. Sorted by day.

        Args:
            date: Only orders for this day, as YYYY-MM-DD.
            boat_id: Only this boat's orders, such as 'V-3105'.
            status: Only orders in this status.

        Returns:
            Each order with its boat's name, length and owner, the service, day, price, notes and whether it
            needs the travel lift.
        """
        if date is not None:
            self._date(date, "date")
        if boat_id is not None:
            self._boat(boat_id)
        if status is not None and status not in ORDER_STATUSES:
            raise ValueError(f"Status {status!r} is not one of: {', '.join(ORDER_STATUSES)}.")
        rows = [self._order_record(oid) for oid, o in self.service_orders.items()
                if (date is None or o["date"] == date) and (boat_id is None or o["boat_id"] == boat_id)
                and (status is None or o["status"] == status)]
        return sorted(rows, key=lambda r: (r["date"], r["order_id"]))

    # -- berth bookings ------------------------------------------------------------------------------------

    @tool("write")
    def book_berth(self, boat_id: str, berth_id: str, arrival: str, departure: str) -> dict:
        """Book a transient berth for a boat from its arrival day to its departure day.

        The berth must be transient, in service, big and deep enough for the boat and free every night of the
        stay; the boat may not be booked anywhere else on those nights. At most 14 nights.

        Args:
            boat_id: The boat's id, such as 'V-3112'.
            berth_id: The berth's id, such as 'C-01'.
            arrival: The first night's date as YYYY-MM-DD, today or later.
            departure: The day the boat leaves as YYYY-MM-DD, after the arrival.

        Returns:
            The new booking with its id, the price a night and the estimated total after the owner's discount.
        """
        boat = self._boat(boat_id)
        berth = self._berth(berth_id)
        self._stay(arrival, departure)
        self._check_berth(boat_id, boat, berth_id, berth, arrival, departure)
        bid = f"BK-{self._next_booking}"
        self._next_booking += 1
        self.bookings[bid] = {"boat_id": boat_id, "berth_id": berth_id, "arrival": arrival,
                              "departure": departure, "status": "reserved"}
        return self._booking_record(bid)

    @tool("write")
    def change_booking(self, booking_id: str, arrival: str | None = None, departure: str | None = None,
                       berth_id: str | None = None) -> dict:
        """Change the dates or the berth of a booking.

        A reserved booking can change any of them; for a boat already in its berth only the departure day can
        change. The changed stay must keep every rule of a new booking.

        Args:
            booking_id: The booking's id, such as 'BK-7403'.
            arrival: The new arrival day as YYYY-MM-DD.
            departure: The new departure day as YYYY-MM-DD.
            berth_id: The new berth, such as 'B-09'.

        Returns:
            The booking after the change, with the price a night and the estimated total.
        """
        booking = self._booking(booking_id)
        if booking["status"] not in _ACTIVE:
            raise ValueError(f"{booking_id} is {booking['status']}; only a reserved or current booking can change.")
        new = {"arrival": arrival, "departure": departure, "berth_id": berth_id}
        new = {k: v for k, v in new.items() if v is not None and v != booking[k]}
        if not new:
            raise ValueError(f"Nothing to change on {booking_id}: give a new arrival, departure or berth.")
        boat = self.boats[booking["boat_id"]]
        if booking["status"] == "in-berth" and set(new) - {"departure"}:
            raise ValueError(f"{boat['name']} is already in {booking['berth_id']} since {booking['arrival']}; "
                             "only the departure day can change. Check the boat out and book again to move it.")
        changed = {**booking, **new}
        berth = self._berth(changed["berth_id"])
        if booking["status"] == "in-berth":
            self._date(changed["departure"], "departure")
            if changed["departure"] <= self.today:
                raise ValueError(f"Departure {changed['departure']} must be after today ({self.today}); "
                                 "check the boat out to end the stay today.")
            nights = (self._date(changed["departure"], "departure") - self._date(changed["arrival"], "arrival")).days
            if nights > MAX_STAY_NIGHTS:
                raise ValueError(f"A stay is at most {MAX_STAY_NIGHTS} nights; {booking['arrival']} to "
                                 f"{changed['departure']} is {nights}.")
        else:
            self._stay(changed["arrival"], changed["departure"])
        self._check_berth(booking["boat_id"], boat, changed["berth_id"], berth, changed["arrival"],
                          changed["departure"], skip=booking_id)
        booking.update(new)
        return self._booking_record(booking_id)

    @tool("write")
    def cancel_booking(self, booking_id: str) -> dict:
        """Cancel a reserved berth booking.

        Cancelling fewer than two days before arrival costs one night at the booked rate (after the owner's
        discount), added to the owner's balance; club members are never charged.

        Args:
            booking_id: The booking's id, such as 'BK-7405'.

        Returns:
            The cancelled booking, the cancellation fee and the owner's balance.
        """
        booking = self._booking(booking_id)
        if booking["status"] != "reserved":
            raise ValueError(f"{booking_id} is {booking['status']}; only a reserved booking can be cancelled.")
        owner = self.owners[self.boats[booking["boat_id"]]["owner_id"]]
        days_ahead = (self._date(booking["arrival"], "arrival") - self._date(self.today, "today")).days
        fee = 0.0
        if days_ahead < LATE_CANCEL_DAYS and owner["tier"] != "club":
            nightly = self._nightly(booking["berth_id"], booking["boat_id"])
            fee = round(nightly * (1 - TIER_DISCOUNTS[owner["tier"]]), 2)
        booking["status"] = "cancelled"
        booking["cancellation_fee"] = fee
        owner["balance"] = round(owner["balance"] + fee, 2)
        return {**self._booking_record(booking_id), "owner_balance": owner["balance"]}

    # -- the docks -----------------------------------------------------------------------------------------

    @tool("write")
    def check_in_boat(self, booking_id: str) -> dict:
        """Check a boat into its booked berth on its arrival day.

        Args:
            booking_id: Today's booking, such as 'BK-7402'.

        Returns:
            The booking, now in-berth, with the berth's dock, shore power and the departure day.
        """
        booking = self._booking(booking_id)
        if booking["status"] != "reserved":
            raise ValueError(f"{booking_id} is {booking['status']}; only a reserved booking can be checked in.")
        if booking["arrival"] != self.today:
            raise ValueError(f"{booking_id} arrives on {booking['arrival']}, not today ({self.today}).")
        berth = self.berths[booking["berth_id"]]
        if berth["status"] != "open":
            raise ValueError(f"Berth {booking['berth_id']} is {berth['status']}; move the booking to another berth.")
        for other_id, other in sorted(self.bookings.items()):
            if other["boat_id"] == booking["boat_id"] and other["status"] == "in-berth":
                raise ValueError(f"{self.boats[booking['boat_id']]['name']} is still checked into "
                                 f"{other['berth_id']} on {other_id}; check it out first.")
        booking["status"] = "in-berth"
        return {**self._booking_record(booking_id), "dock": berth["dock"], "shore_power": berth["shore_power"]}

    @tool("write")
    def check_out_boat(self, booking_id: str) -> dict:
        """Check a boat out of its berth today and bill the stay to its owner's account.

        The stay is charged for the nights actually spent (at least one) at the berth's rate for the boat's
        length, less the owner's tier discount (seasonal 10%, club 15%); leaving early frees the berth from today.

        Args:
            booking_id: The boat's current booking, such as 'BK-7401'.

        Returns:
            The closed booking with its nights, itemized charges and total, and the owner's new balance.
        """
        booking = self._booking(booking_id)
        if booking["status"] != "in-berth":
            raise ValueError(f"{booking_id} is {booking['status']}; only a boat in its berth can be checked out.")
        boat = self.boats[booking["boat_id"]]
        owner = self.owners[boat["owner_id"]]
        nights = max(1, (self._date(self.today, "today") - self._date(booking["arrival"], "arrival")).days)
        nightly = self._nightly(booking["berth_id"], booking["boat_id"])
        stay = round(nightly * nights, 2)
        discount = round(-stay * TIER_DISCOUNTS[owner["tier"]], 2) or 0.0
        total = round(stay + discount, 2)
        booking.update(status="departed", departure=self.today, nights=nights,
                       charges={"nightly_rate": nightly, "berth": stay, "tier_discount": discount}, total=total)
        owner["balance"] = round(owner["balance"] + total, 2)
        return {**self._booking_record(booking_id), "owner_balance": owner["balance"]}

    # -- the yard and the fuel dock ------------------------------------------------------------------------

    @tool("write")
    def schedule_service(self, boat_id: str, service: Service, date: str, notes: str | None = None) -> dict:
        """Schedule a yard service for a boat on a day.

        The yard works Monday to Saturday, up to 60 days ahead. Jobs on the travel lift (haul-out, launch,
        short-haul, bottom-paint) are limited to three a day and to boats up to 50 ft long and 16 ft wide; a
        rigging inspection is for sailboats only. The price is per foot of boat length for lift jobs, flat for
        the others.

        Args:
            boat_id: The boat's id, such as 'V-3111'.
            service: The service wanted.
            date: The day as YYYY-MM-DD.
            notes: What the yard should know, in the customer's or staff member's words.

        Returns:
            The new order with its id, the price and, for lift jobs, how many lift slots are left that day.
        """
        boat = self._boat(boat_id)
        if service not in SERVICES:
            raise ValueError(f"Service {service!r} is not one the yard offers: {', '.join(SERVICES)}.")
        day = self._date(date, "date")
        if date < self.today:
            raise ValueError(f"{date} is in the past (today is {self.today}).")
        if day > self._date(self.today, "today") + timedelta(days=SERVICE_HORIZON_DAYS):
            raise ValueError(f"The yard books at most {SERVICE_HORIZON_DAYS} days ahead; {date} is further out.")
        if day.weekday() == 6:
            raise ValueError(f"{date} is a Sunday; the yard works Monday to Saturday.")
        if service == "rigging-inspection" and boat["type"] != "sailboat":
            raise ValueError(f"{boat['name']} is a {boat['type']}; rigging inspections are for sailboats.")
        for oid, order in sorted(self.service_orders.items()):
            if (order["boat_id"] == boat_id and order["service"] == service and order["date"] == date
                    and order["status"] == "scheduled"):
                raise ValueError(f"{boat['name']} already has {service} on {date} ({oid}).")
        if service in LIFT_SERVICES:
            if boat["length_ft"] > LIFT_MAX_LENGTH_FT or boat["beam_ft"] > LIFT_MAX_BEAM_FT:
                raise ValueError(f"{boat['name']} ({boat['length_ft']} ft, beam {boat['beam_ft']} ft) is too big "
                                 f"for the travel lift (up to {LIFT_MAX_LENGTH_FT:g} ft long, "
                                 f"{LIFT_MAX_BEAM_FT:g} ft wide).")
            if self._lift_jobs(date) >= LIFT_JOBS_PER_DAY:
                raise ValueError(f"The travel lift is fully booked on {date} ({LIFT_JOBS_PER_DAY} jobs).")
        if service in PER_FOOT_PRICES:
            price = round(PER_FOOT_PRICES[service] * boat["length_ft"], 2)
        else:
            price = FLAT_PRICES[service]
        notes = " ".join((notes or "").split())
        oid = f"SO-{self._next_order}"
        self._next_order += 1
        self.service_orders[oid] = {"boat_id": boat_id, "service": service, "date": date, "status": "scheduled",
                                    "price": price, "notes": notes}
        record = self._order_record(oid)
        if service in LIFT_SERVICES:
            record["lift_slots_left"] = LIFT_JOBS_PER_DAY - self._lift_jobs(date)
        return record

    @tool("write")
    def cancel_service_order(self, order_id: str) -> dict:
        """Cancel a scheduled yard service order.

        Args:
            order_id: The order's id, such as 'SO-9106'.

        Returns:
            The cancelled order.
        """
        if order_id not in self.service_orders:
            raise ValueError(f"No service order with id {order_id!r}.")
        order = self.service_orders[order_id]
        if order["status"] != "scheduled":
            raise ValueError(f"{order_id} is {order['status']}; only a scheduled order can be cancelled.")
        order["status"] = "cancelled"
        return self._order_record(order_id)

    @tool("write")
    def record_fuel_sale(self, boat_id: str, fuel: Fuel, gallons: float) -> dict:
        """Charge fuel pumped at the fuel dock to a boat's owner's account.

        The fuel must be what the boat's engine burns; at most 300 gallons a sale.

        Args:
            boat_id: The boat's id, such as 'V-3103'.
            fuel: The fuel pumped.
            gallons: Gallons pumped, as the pump shows them.

        Returns:
            The sale with its id, price per gallon and amount, and the owner's new balance.
        """
        boat = self._boat(boat_id)
        if fuel not in FUELS:
            raise ValueError(f"Fuel {fuel!r} is not one we sell: {', '.join(FUELS)}.")
        if fuel != boat["fuel"]:
            raise ValueError(f"{boat['name']} runs on {boat['fuel']}, not {fuel}.")
        if isinstance(gallons, bool) or not isinstance(gallons, (int, float)) or not 0 < gallons <= MAX_FUEL_GALLONS:
            raise ValueError(f"Gallons {gallons!r} must be more than 0 and at most {MAX_FUEL_GALLONS:g}.")
        gallons = round(float(gallons), 1)
        amount = round(gallons * FUEL_PRICES[fuel], 2)
        sid = f"FS-{self._next_sale}"
        self._next_sale += 1
        self.fuel_sales[sid] = {"boat_id": boat_id, "date": self.today, "fuel": fuel, "gallons": gallons,
                                "price_per_gallon": FUEL_PRICES[fuel], "amount": amount}
        owner = self.owners[boat["owner_id"]]
        owner["balance"] = round(owner["balance"] + amount, 2)
        return {"sale_id": sid, **copy.deepcopy(self.fuel_sales[sid]), "boat": boat["name"],
                "owner_id": boat["owner_id"], "owner_balance": owner["balance"]}

    @tool("write")
    def take_payment(self, owner_id: str, amount: float, method: PaymentMethod) -> dict:
        """Take a payment from a boat owner toward their account balance.

        Args:
            owner_id: The owner's id, such as 'OW-4102'.
            amount: Dollars paid, no more than the balance.
            method: How they paid.

        Returns:
            The payment and the balance left.
        """
        owner = self._owner(owner_id)
        if method not in PAYMENT_METHODS:
            raise ValueError(f"Payment method {method!r} is not accepted; use {', '.join(PAYMENT_METHODS)}.")
        if isinstance(amount, bool) or not isinstance(amount, (int, float)):
            raise ValueError(f"Amount {amount!r} must be a number of dollars.")
        amount = round(float(amount), 2)
        if amount <= 0:
            raise ValueError(f"Amount {amount} must be more than zero.")
        if amount > owner["balance"]:
            raise ValueError(f"{owner['name']} owes {owner['balance']:.2f}; {amount:.2f} is more than that.")
        owner["balance"] = round(owner["balance"] - amount, 2)
        return {"owner_id": owner_id, "name": owner["name"], "paid": amount, "method": method,
                "balance": owner["balance"]}

    # -- helpers -------------------------------------------------------------------------------------------

    @staticmethod
    def _date(value: str, what: str) -> Date:
        if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
            raise ValueError(f"{what} {value!r} is not a date as YYYY-MM-DD.")
        try:
            return Date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{what} {value!r} is not a real date.") from None

    def _stay(self, arrival: str, departure: str) -> int:
        """Nights from arrival to departure, refusing a past arrival, a departure not after it, or too long a stay."""
        start, end = self._date(arrival, "arrival"), self._date(departure, "departure")
        if arrival < self.today:
            raise ValueError(f"Arrival {arrival} is in the past (today is {self.today}).")
        if end <= start:
            raise ValueError(f"Departure {departure} must be after the arrival {arrival}.")
        nights = (end - start).days
        if nights > MAX_STAY_NIGHTS:
            raise ValueError(f"A stay is at most {MAX_STAY_NIGHTS} nights; {arrival} to {departure} is {nights}.")
        return nights

    @staticmethod
    def _misfit(boat: dict, berth: dict) -> str | None:
        """Why a boat does not fit a berth, or None."""
        if boat["length_ft"] > berth["max_length_ft"]:
            return f"is {boat['length_ft']} ft long; the berth takes up to {berth['max_length_ft']} ft"
        if boat["beam_ft"] > berth["max_beam_ft"]:
            return f"is {boat['beam_ft']} ft wide; the berth takes up to {berth['max_beam_ft']} ft"
        if boat["draft_ft"] + DEPTH_CLEARANCE_FT > berth["depth_ft"]:
            return (f"draws {boat['draft_ft']} ft; the berth has {berth['depth_ft']} ft at low tide and needs "
                    f"{DEPTH_CLEARANCE_FT:g} ft under the keel")
        return None

    def _clash(self, berth_id: str, arrival: str, departure: str, skip: str | None = None) -> str | None:
        """The active booking of a berth overlapping a stay, or None."""
        for bid, b in sorted(self.bookings.items()):
            if (bid != skip and b["berth_id"] == berth_id and b["status"] in _ACTIVE
                    and b["arrival"] < departure and arrival < b["departure"]):
                return bid
        return None

    def _check_berth(self, boat_id: str, boat: dict, berth_id: str, berth: dict, arrival: str, departure: str,
                     skip: str | None = None) -> None:
        if berth["kind"] != "transient":
            raise ValueError(f"{berth_id} is a seasonal berth; book a transient one.")
        if berth["status"] != "open":
            raise ValueError(f"{berth_id} is {berth['status']}" + (f" ({berth['notes']})." if berth.get("notes")
                                                                   else "."))
        why = self._misfit(boat, berth)
        if why:
            raise ValueError(f"{boat['name']} does not fit {berth_id}: it {why}.")
        clash = self._clash(berth_id, arrival, departure, skip)
        if clash:
            other = self.bookings[clash]
            raise ValueError(f"{berth_id} is taken from {other['arrival']} to {other['departure']} ({clash}).")
        for bid, b in sorted(self.bookings.items()):
            if (bid != skip and b["boat_id"] == boat_id and b["status"] in _ACTIVE
                    and b["arrival"] < departure and arrival < b["departure"]):
                raise ValueError(f"{boat['name']} is already booked into {b['berth_id']} from {b['arrival']} to "
                                 f"{b['departure']} ({bid}).")

    def _nightly(self, berth_id: str, boat_id: str) -> float:
        return round(self.berths[berth_id]["rate_per_ft"] * self.boats[boat_id]["length_ft"], 2)

    def _lift_jobs(self, date: str) -> int:
        return sum(o["date"] == date and o["status"] == "scheduled" and o["service"] in LIFT_SERVICES
                   for o in self.service_orders.values())

    def _owner(self, owner_id: str) -> dict:
        if owner_id not in self.owners:
            raise ValueError(f"No owner with id {owner_id!r}.")
        return self.owners[owner_id]

    def _boat(self, boat_id: str) -> dict:
        if boat_id not in self.boats:
            raise ValueError(f"No boat with id {boat_id!r}.")
        return self.boats[boat_id]

    def _berth(self, berth_id: str) -> dict:
        if berth_id not in self.berths:
            raise ValueError(f"No berth with id {berth_id!r}; berths: {', '.join(sorted(self.berths))}.")
        return self.berths[berth_id]

    def _booking(self, booking_id: str) -> dict:
        if booking_id not in self.bookings:
            raise ValueError(f"No booking with id {booking_id!r}.")
        return self.bookings[booking_id]

    def _owner_record(self, owner_id: str) -> dict:
        record = {"owner_id": owner_id, **copy.deepcopy(self.owners[owner_id])}
        record["boats"] = [
            {"boat_id": vid, "name": b["name"], "type": b["type"], "length_ft": b["length_ft"],
             "beam_ft": b["beam_ft"], "draft_ft": b["draft_ft"], "fuel": b["fuel"],
             "registration": b["registration"],
             "seasonal_berth": next((bid for bid, berth in sorted(self.berths.items())
                                     if berth.get("seasonal_boat") == vid), None)}
            for vid, b in sorted(self.boats.items()) if b["owner_id"] == owner_id]
        boat_ids = {b["boat_id"] for b in record["boats"]}
        record["bookings"] = [
            {"booking_id": bid, "boat_id": b["boat_id"], "berth_id": b["berth_id"], "arrival": b["arrival"],
             "departure": b["departure"], "status": b["status"]}
            for bid, b in sorted(self.bookings.items()) if b["boat_id"] in boat_ids and b["status"] in _ACTIVE]
        return record

    def _booking_record(self, booking_id: str) -> dict:
        b = self.bookings[booking_id]
        boat = self.boats[b["boat_id"]]
        owner = self.owners[boat["owner_id"]]
        nightly = self._nightly(b["berth_id"], b["boat_id"])
        nights = max(1, (self._date(b["departure"], "departure") - self._date(b["arrival"], "arrival")).days)
        estimate = round(nightly * nights * (1 - TIER_DISCOUNTS[owner["tier"]]), 2)
        return {"booking_id": booking_id, **copy.deepcopy(b), "boat": boat["name"], "owner_id": boat["owner_id"],
                "owner": owner["name"], "nightly_rate": nightly, "estimated_total": estimate}

    def _order_record(self, order_id: str) -> dict:
        o = self.service_orders[order_id]
        boat = self.boats[o["boat_id"]]
        return {"order_id": order_id, **copy.deepcopy(o), "boat": boat["name"], "length_ft": boat["length_ft"],
                "owner": self.owners[boat["owner_id"]]["name"], "uses_lift": o["service"] in LIFT_SERVICES}
