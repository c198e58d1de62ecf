"""The back office of a car rental agency as a rods environment (docs/guides/environments.md).

Branches in a few cities, the fleet (plate, class, odometer, fuel), customers with their driving
licences and loyalty tier, reservations by vehicle class, rentals from pick-up to return, and damage
reports. The public attributes are the state; the constructor takes that state as keyword arguments
and derives from it the next free reservation, rental and damage-report numbers and which rental
each car is out on. `today` is part of the state, so every call gives the same answer.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from datetime import date as Date
from types import MappingProxyType
from typing import Literal, get_args

from rods.envs import tool

VehicleClass = Literal["economy", "compact", "suv", "van"]
Extra = Literal["child_seat", "gps", "additional_driver", "toll_pass", "roof_box"]
Severity = Literal["minor", "moderate", "severe"]
ReservationStatus = Literal["confirmed", "picked-up", "cancelled"]

#: Daily rate of each vehicle class, in dollars.
CLASS_RATES = MappingProxyType({"economy": 42.0, "compact": 49.0, "suv": 74.0, "van": 89.0})
#: Daily price of each extra, in dollars, and how many one booking may carry.
EXTRA_PRICES = MappingProxyType({"child_seat": 11.0, "gps": 9.0, "additional_driver": 13.0,
                                 "toll_pass": 6.0, "roof_box": 15.0})
EXTRA_LIMITS = MappingProxyType({"child_seat": 3, "gps": 1, "additional_driver": 2, "toll_pass": 1, "roof_box": 1})
#: Share of the time charge taken off by loyalty tier.
LOYALTY_DISCOUNTS = MappingProxyType({"standard": 0.0, "silver": 0.05, "gold": 0.10})
#: What the renter pays toward damage found during their rental, by severity.
DAMAGE_DEDUCTIBLES = MappingProxyType({"minor": 150.0, "moderate": 500.0, "severe": 1000.0})
VEHICLE_CLASSES = get_args(VehicleClass)
SEVERITIES = get_args(Severity)
MILES_PER_DAY = 200          # included miles per rental day
EXTRA_MILE_RATE = 0.30       # dollars per mile over the allowance
FUEL_PER_EIGHTH = 12.0       # dollars per eighth of a tank missing at return
ONE_WAY_FEE = 65.0           # returned in another city than the pick-up city
LATE_CANCEL_FEE = 30.0       # cancelled less than two days before pick-up (waived for gold members)
FULL_TANK = 8                # fuel is measured in eighths of a tank
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _words(text: str) -> list[str]:
    """Lower-case words of a name, accents dropped ("Désirée O'Neil" -> ["desiree", "oneil"])."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", plain.replace("'", ""))


def _compact(text: str) -> str:
    """Letters and digits only, upper-case: how licence numbers and plates are compared."""
    return re.sub(r"[^A-Z0-9]", "", text.upper())


class CarRental:
    """A rental agency's branches, fleet, customers, reservations and rentals, seen from the back office."""

    def __init__(self, today: str = "2026-05-14", branches: dict[str, dict] | None = None,
                 vehicles: dict[str, dict] | None = None, customers: dict[str, dict] | None = None,
                 reservations: dict[str, dict] | None = None, rentals: dict[str, dict] | None = None,
                 damage_reports: dict[str, dict] | None = None) -> None:
        self._date(today, "today")
        self.today = today
        # branch id ("BOS-LOGAN") -> {"name", "city", "phone"}
        self.branches: dict[str, dict] = copy.deepcopy(branches or {})
        # plate ("7MBX52") -> {"make_model", "vehicle_class", "branch_id", "mileage", "fuel_level" (eighths),
        #                      "status": "available" | "rented" | "maintenance"}
        self.vehicles: dict[str, dict] = copy.deepcopy(vehicles or {})
        # customer id ("C-1004") -> {"name", "licence_number", "licence_expiry", "phone", "loyalty"}
        self.customers: dict[str, dict] = copy.deepcopy(customers or {})
        # reservation id ("R-5201") -> {"customer_id", "vehicle_class", "pickup_branch", "return_branch",
        #     "pickup_date", "return_date", "extras" ({extra: quantity}), "status"} (+ "cancellation_fee")
        self.reservations: dict[str, dict] = copy.deepcopy(reservations or {})
        # rental id ("RA-8803") -> {"reservation_id", "customer_id", "plate", "charged_class", "pickup_branch",
        #     "return_branch", "pickup_date", "due_date", "odometer_out", "fuel_out", "extras", "status"}
        #     (+ "returned_date", "odometer_in", "fuel_in", "charges", "total" once closed)
        self.rentals: dict[str, dict] = copy.deepcopy(rentals or {})
        # report id ("DR-311") -> {"plate", "rental_id", "date", "description", "severity"}
        self.damage_reports: dict[str, dict] = copy.deepcopy(damage_reports or {})
        self._open_by_plate = {r["plate"]: rid for rid, r in sorted(self.rentals.items()) if r["status"] == "open"}
        self._next_reservation = 1 + max((int(k.split("-")[1]) for k in self.reservations), default=5000)
        self._next_rental = 1 + max((int(k.split("-")[1]) for k in self.rentals), default=8800)
        self._next_report = 1 + max((int(k.split("-")[1]) for k in self.damage_reports), default=300)

    # -- looking things up ---------------------------------------------------------------------------------

    @tool("read")
    def get_today(self) -> dict:
        """Tell today's date in the system and its weekday.

        Returns:
            The date as YYYY-MM-DD and the name of the weekday.
        """
        return {"today": self.today, "weekday": WEEKDAY_NAMES[self._date(self.today, "today").weekday()]}

    @tool("read")
    def list_branches(self, city: str | None = None) -> list[dict]:
        """List the agency's branches, optionally in one city only.

        Args:
            city: Only branches in this city, such as 'Boston'.

        Returns:
            Each branch's id, name, city and phone number, and how many cars are on its lot ready to rent.
        """
        cities = sorted({b["city"] for b in self.branches.values()})
        if city is not None and city.strip().lower() not in {c.lower() for c in cities}:
            raise ValueError(f"We have no branch in {city!r}; cities: {', '.join(cities)}.")
        return [{"branch_id": bid, **copy.deepcopy(b),
                 "cars_ready": sum(v["branch_id"] == bid and v["status"] == "available"
                                   for v in self.vehicles.values())}
                for bid, b in sorted(self.branches.items())
                if city is None or b["city"].lower() == city.strip().lower()]

    @tool("read")
    def find_customer(self, name: str | None = None, licence_number: str | None = None,
                      phone: str | None = None) -> list[dict]:
        """Look up a customer by name, driving licence number or phone number.

        Give at least one; all that are given must match.

        Args:
            name: The customer's name or part of it, such as 'Kowalski' or 'Emily T'; case and accents do not matter.
            licence_number: Their driving licence number, with or without spaces, such as 'MA S70122458'.
            phone: Their phone number or its last 4 or more digits, in any format.

        Returns:
            Every matching customer (possibly none): id, name, licence number and expiry, phone, loyalty tier,
            their confirmed reservations and the rental they have open, if any.
        """
        if not any((name, licence_number, phone)):
            raise ValueError("Give a name, a licence number or a phone number to search by.")
        words = _words(name or "")
        licence = _compact(licence_number or "")
        digits = re.sub(r"\D", "", phone or "")
        if phone and len(digits) < 4:
            raise ValueError(f"Phone {phone!r}: give at least the last 4 digits.")
        found = []
        for cid, customer in sorted(self.customers.items()):
            names = _words(customer["name"])
            if words and not all(any(n.startswith(w) for n in names) for w in words):
                continue
            if licence and _compact(customer["licence_number"]) != licence:
                continue
            if digits and not re.sub(r"\D", "", customer["phone"]).endswith(digits):
                continue
            found.append(self._customer_record(cid))
        return found

    @tool("read")
    def list_reservations(self, customer_id: str | None = None, branch_id: str | None = None,
                          pickup_date: str | None = None, status: ReservationStatus | None = None) -> list[dict]:
        """List reservations by customer, pick-up branch, pick-up day or status.

        The filters given combine; with none, every reservation on file. Sorted by pick-up day.

        Args:
            customer_id: Only this customer's reservations, such as 'C-1004'.
            branch_id: Only reservations picked up at this branch, such as 'PVD-DOWNTOWN'.
            pickup_date: Only reservations picked up on this day, as YYYY-MM-DD.
            status: Only reservations in this status.

        Returns:
            Each reservation with its customer's name, its dates and branches, extras and estimated total.
        """
        if customer_id is not None:
            self._customer(customer_id)
        if branch_id is not None:
            self._branch(branch_id)
        if pickup_date is not None:
            self._date(pickup_date, "pickup_date")
        rows = [self._reservation_record(rid) for rid, r in self.reservations.items()
                if (customer_id is None or r["customer_id"] == customer_id)
                and (branch_id is None or r["pickup_branch"] == branch_id)
                and (pickup_date is None or r["pickup_date"] == pickup_date)
                and (status is None or r["status"] == status)]
        return sorted(rows, key=lambda r: (r["pickup_date"], r["reservation_id"]))

    @tool("read")
    def search_available_vehicles(self, branch_id: str, pickup_date: str, return_date: str,
                                  vehicle_class: VehicleClass | None = None) -> dict:
        """Find which vehicle classes can still be booked at a branch for a period, with prices.

        A class can be booked while the branch has more cars of it (on the lot, or due back there by the
        pick-up day) than reservations of it overlapping the period.

        Args:
            branch_id: The pick-up branch, such as 'HFD-UNION'.
            pickup_date: The pick-up day as YYYY-MM-DD, today or later.
            return_date: The return day as YYYY-MM-DD, on or after the pick-up day.
            vehicle_class: Only this class.

        Returns:
            Per class: the daily rate, how many can still be booked and the price for the period before
            discounts and extras; and the cars of those classes on the lot now, with plate, model, mileage
            and fuel level (in eighths).
        """
        self._branch(branch_id)
        days = self._period(pickup_date, return_date)
        classes = VEHICLE_CLASSES if vehicle_class is None else (self._vehicle_class(vehicle_class),)
        return {
            "branch_id": branch_id, "pickup_date": pickup_date, "return_date": return_date, "days": days,
            "classes": [{"vehicle_class": c, "daily_rate": CLASS_RATES[c],
                         "available": self._free(c, branch_id, pickup_date, return_date),
                         "price": round(CLASS_RATES[c] * days, 2)} for c in classes],
            "on_the_lot": [{"plate": p, "make_model": v["make_model"], "vehicle_class": v["vehicle_class"],
                            "mileage": v["mileage"], "fuel_level": v["fuel_level"]}
                           for p, v in sorted(self.vehicles.items())
                           if v["branch_id"] == branch_id and v["status"] == "available"
                           and v["vehicle_class"] in classes],
        }

    # -- reservations --------------------------------------------------------------------------------------

    @tool("write")
    def make_reservation(self, customer_id: str, vehicle_class: VehicleClass, pickup_branch: str, pickup_date: str,
                         return_date: str, return_branch: str | None = None, extras: list[Extra] | None = None) -> dict:
        """Reserve a car of a class for a customer.

        The customer's licence must be valid through the return day, and the class must still be free at the
        branch for the period. Returning in another city adds a one-way fee.

        Args:
            customer_id: The customer's id, such as 'C-1004'.
            vehicle_class: The class of car.
            pickup_branch: The branch the car is picked up at, such as 'BOS-LOGAN'.
            pickup_date: The pick-up day as YYYY-MM-DD, today or later.
            return_date: The return day as YYYY-MM-DD, on or after the pick-up day.
            return_branch: The branch it is returned to; leave out to return where it was picked up.
            extras: Extras to add, one entry per item (two child seats: ['child_seat', 'child_seat']).

        Returns:
            The new reservation with its id and estimated total.
        """
        customer = self._customer(customer_id)
        self._vehicle_class(vehicle_class)
        self._branch(pickup_branch)
        return_branch = return_branch or pickup_branch
        self._branch(return_branch)
        self._period(pickup_date, return_date)
        self._check_licence(customer, return_date)
        wanted: dict[str, int] = {}
        for extra in extras or []:
            self._extra(extra)
            wanted[extra] = wanted.get(extra, 0) + 1
        for extra, quantity in wanted.items():
            self._check_quantity(extra, quantity)
        if self._free(vehicle_class, pickup_branch, pickup_date, return_date) < 1:
            raise ValueError(f"No {vehicle_class} left at {pickup_branch} from {pickup_date} to {return_date}.")
        rid = f"R-{self._next_reservation}"
        self._next_reservation += 1
        self.reservations[rid] = {"customer_id": customer_id, "vehicle_class": vehicle_class,
                                  "pickup_branch": pickup_branch, "return_branch": return_branch,
                                  "pickup_date": pickup_date, "return_date": return_date,
                                  "extras": dict(sorted(wanted.items())), "status": "confirmed"}
        return self._reservation_record(rid)

    @tool("write")
    def modify_reservation(self, reservation_id: str, pickup_date: str | None = None, return_date: str | None = None,
                           vehicle_class: VehicleClass | None = None, pickup_branch: str | None = None,
                           return_branch: str | None = None) -> dict:
        """Change the dates, class or branches of a confirmed reservation.

        What is left out stays as it is. The changed reservation must still fit: the class free at the branch
        for the new period and the customer's licence valid through the return day.

        Args:
            reservation_id: The reservation's id, such as 'R-5202'.
            pickup_date: The new pick-up day as YYYY-MM-DD.
            return_date: The new return day as YYYY-MM-DD.
            vehicle_class: The new class of car.
            pickup_branch: The new pick-up branch, such as 'BOS-BACKBAY'.
            return_branch: The new return branch.

        Returns:
            The reservation as changed, with its new estimated total.
        """
        res = self._reservation(reservation_id)
        if res["status"] != "confirmed":
            raise ValueError(f"{reservation_id} is {res['status']}; only a confirmed reservation can be changed.")
        new = {"pickup_date": pickup_date, "return_date": return_date, "vehicle_class": vehicle_class,
               "pickup_branch": pickup_branch, "return_branch": return_branch}
        new = {k: v for k, v in new.items() if v is not None and v != res[k]}
        if not new:
            raise ValueError(f"Nothing to change on {reservation_id}: give a new date, class or branch.")
        changed = {**res, **new}
        self._vehicle_class(changed["vehicle_class"])
        self._branch(changed["pickup_branch"])
        self._branch(changed["return_branch"])
        self._period(changed["pickup_date"], changed["return_date"])
        self._check_licence(self.customers[res["customer_id"]], changed["return_date"])
        if self._free(changed["vehicle_class"], changed["pickup_branch"], changed["pickup_date"],
                      changed["return_date"], skip=reservation_id) < 1:
            raise ValueError(f"No {changed['vehicle_class']} left at {changed['pickup_branch']} "
                             f"from {changed['pickup_date']} to {changed['return_date']}.")
        res.update(new)
        return self._reservation_record(reservation_id)

    @tool("write")
    def cancel_reservation(self, reservation_id: str) -> dict:
        """Cancel a confirmed reservation.

        Cancelling less than two days before pick-up costs the late-cancellation fee, except for gold members.

        Args:
            reservation_id: The reservation's id, such as 'R-5203'.

        Returns:
            The cancelled reservation and the cancellation fee charged.
        """
        res = self._reservation(reservation_id)
        if res["status"] != "confirmed":
            raise ValueError(f"{reservation_id} is already {res['status']}.")
        days_ahead = (self._date(res["pickup_date"], "pickup_date") - self._date(self.today, "today")).days
        gold = self.customers[res["customer_id"]]["loyalty"] == "gold"
        res["status"] = "cancelled"
        res["cancellation_fee"] = LATE_CANCEL_FEE if days_ahead < 2 and not gold else 0.0
        return self._reservation_record(reservation_id)

    @tool("write")
    def add_extra(self, booking_id: str, extra: Extra, quantity: int = 1) -> dict:
        """Add an extra, such as a child seat or GPS, to a confirmed reservation or an open rental.

        Args:
            booking_id: A reservation id ('R-5202') or an open rental's id ('RA-8804').
            extra: The extra to add.
            quantity: How many to add.

        Returns:
            The booking's extras after the change and what they cost per day.
        """
        self._extra(extra)
        if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
            raise ValueError(f"Quantity {quantity!r} must be a whole number of at least 1.")
        if booking_id in self.reservations:
            booking = self.reservations[booking_id]
            if booking["status"] != "confirmed":
                raise ValueError(f"{booking_id} is {booking['status']}; add extras to a confirmed reservation "
                                 "or to the open rental.")
        elif booking_id in self.rentals:
            booking = self.rentals[booking_id]
            if booking["status"] != "open":
                raise ValueError(f"Rental {booking_id} is closed.")
        else:
            raise ValueError(f"No reservation or rental with id {booking_id!r}.")
        self._check_quantity(extra, booking["extras"].get(extra, 0) + quantity)
        counts = {**booking["extras"], extra: booking["extras"].get(extra, 0) + quantity}
        booking["extras"] = dict(sorted(counts.items()))
        return {"booking_id": booking_id, "extras": dict(booking["extras"]),
                "extras_per_day": round(sum(EXTRA_PRICES[e] * q for e, q in booking["extras"].items()), 2)}

    # -- the counter ---------------------------------------------------------------------------------------

    @tool("write")
    def start_rental(self, reservation_id: str, plate: str) -> dict:
        """Hand a car to a customer for today's reservation and open the rental.

        The car must be on the lot of the pick-up branch and ready; a car of a dearer class is a free upgrade
        (the reserved class is charged). The customer may have one open rental at a time.

        Args:
            reservation_id: Today's reservation, such as 'R-5201'.
            plate: The plate of the car handed over, such as '7MBX52'.

        Returns:
            The new rental with its id, the car, odometer and fuel at pick-up, and the due day.
        """
        res = self._reservation(reservation_id)
        if res["status"] != "confirmed":
            raise ValueError(f"{reservation_id} is {res['status']}; only a confirmed reservation can be picked up.")
        if res["pickup_date"] != self.today:
            raise ValueError(f"{reservation_id} is for pick-up on {res['pickup_date']}, not today ({self.today}).")
        plate = self._plate(plate)
        car = self.vehicles[plate]
        if car["branch_id"] != res["pickup_branch"]:
            raise ValueError(f"{plate} is at {car['branch_id']}, not at {res['pickup_branch']}.")
        if car["status"] != "available":
            raise ValueError(f"{plate} is {car['status']}, not ready to rent.")
        if CLASS_RATES[car["vehicle_class"]] < CLASS_RATES[res["vehicle_class"]]:
            raise ValueError(f"{plate} is a {car['vehicle_class']}; {reservation_id} is for a {res['vehicle_class']}.")
        customer = self.customers[res["customer_id"]]
        self._check_licence(customer, res["return_date"])
        for rid, rental in sorted(self.rentals.items()):
            if rental["customer_id"] == res["customer_id"] and rental["status"] == "open":
                raise ValueError(f"{customer['name']} already has rental {rid} open ({rental['plate']}).")
        rid = f"RA-{self._next_rental}"
        self._next_rental += 1
        self.rentals[rid] = {"reservation_id": reservation_id, "customer_id": res["customer_id"], "plate": plate,
                             "charged_class": res["vehicle_class"], "pickup_branch": res["pickup_branch"],
                             "return_branch": res["return_branch"], "pickup_date": self.today,
                             "due_date": res["return_date"], "odometer_out": car["mileage"],
                             "fuel_out": car["fuel_level"], "extras": dict(res["extras"]), "status": "open"}
        res["status"] = "picked-up"
        car["status"] = "rented"
        self._open_by_plate[plate] = rid
        return self._rental_record(rid)

    @tool("write")
    def return_vehicle(self, plate: str, branch_id: str, odometer: int, fuel_level: int) -> dict:
        """Check a car back in at a branch, close its open rental and compute the charges.

        Charges: the reserved class's daily rate for each day out (at least one) less the loyalty discount;
        each mile over 200 a day; the extras per day; each missing eighth of fuel; a one-way fee when returned
        in another city; and the deductible for damage reported during the rental. A car with moderate or
        severe damage goes to maintenance, any other back on the lot.

        Args:
            plate: The car's plate, such as '3EKL64'.
            branch_id: The branch it is returned to, such as 'BOS-LOGAN'.
            odometer: The odometer reading in miles.
            fuel_level: The fuel gauge in eighths of a tank, 0 (empty) to 8 (full); a half tank is 4.

        Returns:
            The closed rental with its itemized charges and total.
        """
        plate = self._plate(plate)
        self._branch(branch_id)
        rid = self._open_by_plate.get(plate)
        if rid is None:
            raise ValueError(f"{plate} is not out on a rental.")
        rental = self.rentals[rid]
        if isinstance(odometer, bool) or not isinstance(odometer, int) or odometer < rental["odometer_out"]:
            raise ValueError(f"Odometer {odometer!r} must be whole miles, at least the {rental['odometer_out']} "
                             "it read at pick-up.")
        if isinstance(fuel_level, bool) or not isinstance(fuel_level, int) or not 0 <= fuel_level <= FULL_TANK:
            raise ValueError(f"Fuel level {fuel_level!r} must be in eighths of a tank, 0 to {FULL_TANK}.")
        days = max(1, (self._date(self.today, "today") - self._date(rental["pickup_date"], "pickup_date")).days)
        loyalty = self.customers[rental["customer_id"]]["loyalty"]
        time = CLASS_RATES[rental["charged_class"]] * days
        over = max(0, odometer - rental["odometer_out"] - MILES_PER_DAY * days)
        reports = [r for r in self.damage_reports.values() if r["rental_id"] == rid]
        charges = {
            "days": days,
            "time": round(time, 2),
            "loyalty_discount": round(-time * LOYALTY_DISCOUNTS[loyalty], 2) or 0.0,
            "miles_driven": odometer - rental["odometer_out"],
            "mileage": round(over * EXTRA_MILE_RATE, 2),
            "extras": round(sum((EXTRA_PRICES[e] * q for e, q in rental["extras"].items()), 0.0) * days, 2),
            "fuel": round(max(0, rental["fuel_out"] - fuel_level) * FUEL_PER_EIGHTH, 2),
            "one_way": (ONE_WAY_FEE if self.branches[branch_id]["city"]
                        != self.branches[rental["pickup_branch"]]["city"] else 0.0),
            "damage": round(sum((DAMAGE_DEDUCTIBLES[r["severity"]] for r in reports), 0.0), 2),
        }
        total = round(sum(v for k, v in charges.items() if k not in ("days", "miles_driven")), 2)
        rental.update(status="closed", return_branch=branch_id, returned_date=self.today, odometer_in=odometer,
                      fuel_in=fuel_level, charges=charges, total=total)
        car = self.vehicles[plate]
        damaged = any(r["severity"] != "minor" for r in reports)
        car.update(branch_id=branch_id, mileage=odometer, fuel_level=fuel_level,
                   status="maintenance" if damaged else "available")
        del self._open_by_plate[plate]
        return self._rental_record(rid)

    @tool("write")
    def report_damage(self, plate: str, description: str, severity: Severity) -> dict:
        """File a damage report on a car.

        Damage found while the car is out on a rental is charged to that rental's renter at return (the
        deductible of its severity). A car not on a rental with moderate or severe damage goes to maintenance.

        Args:
            plate: The car's plate, such as 'AH9025'.
            description: What is damaged and where, as the staff member words it.
            severity: How bad it is.

        Returns:
            The report with its id, the rental it is charged to (if any) and the deductible.
        """
        plate = self._plate(plate)
        description = " ".join(description.split())
        if not description:
            raise ValueError("Describe the damage.")
        if severity not in SEVERITIES:
            raise ValueError(f"Severity {severity!r} is not one of: {', '.join(SEVERITIES)}.")
        rental_id = self._open_by_plate.get(plate)
        did = f"DR-{self._next_report}"
        self._next_report += 1
        self.damage_reports[did] = {"plate": plate, "rental_id": rental_id, "date": self.today,
                                    "description": description, "severity": severity}
        car = self.vehicles[plate]
        if rental_id is None and severity != "minor":
            car["status"] = "maintenance"
        return {"report_id": did, **copy.deepcopy(self.damage_reports[did]),
                "deductible": DAMAGE_DEDUCTIBLES[severity] if rental_id else 0.0, "vehicle_status": car["status"]}

    # -- helpers -------------------------------------------------------------------------------------------

    @staticmethod
    def _date(value: str, what: str) -> Date:
        if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
            raise ValueError(f"{what} {value!r} is not a date as YYYY-MM-DD.")
        try:
            return Date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{what} {value!r} is not a real date.") from None

    def _period(self, pickup_date: str, return_date: str) -> int:
        """Rental days between two dates (at least one), refusing a past pick-up or a return before it."""
        start, end = self._date(pickup_date, "pickup_date"), self._date(return_date, "return_date")
        if pickup_date < self.today:
            raise ValueError(f"Pick-up day {pickup_date} is in the past (today is {self.today}).")
        if end < start:
            raise ValueError(f"Return day {return_date} is before the pick-up day {pickup_date}.")
        return max(1, (end - start).days)

    def _free(self, vehicle_class: str, branch_id: str, pickup_date: str, return_date: str,
              skip: str | None = None) -> int:
        """How many cars of a class a branch can still promise for a period (`skip`: a reservation being changed)."""
        cars = sum(v["vehicle_class"] == vehicle_class and v["branch_id"] == branch_id and v["status"] == "available"
                   for v in self.vehicles.values())
        cars += sum(self.vehicles[r["plate"]]["vehicle_class"] == vehicle_class and r["return_branch"] == branch_id
                    and r["due_date"] <= pickup_date for r in self.rentals.values() if r["status"] == "open")
        held = sum(r["vehicle_class"] == vehicle_class and r["pickup_branch"] == branch_id
                   and r["pickup_date"] < return_date and pickup_date < r["return_date"]
                   for rid, r in self.reservations.items() if r["status"] == "confirmed" and rid != skip)
        return max(0, cars - held)

    def _check_licence(self, customer: dict, until: str) -> None:
        if customer["licence_expiry"] < until:
            raise ValueError(f"{customer['name']}'s licence {customer['licence_number']} expires on "
                             f"{customer['licence_expiry']}, before {until}.")

    @staticmethod
    def _vehicle_class(vehicle_class: str) -> str:
        if vehicle_class not in CLASS_RATES:
            raise ValueError(f"Vehicle class {vehicle_class!r} is not one of: {', '.join(CLASS_RATES)}.")
        return vehicle_class

    @staticmethod
    def _extra(extra: str) -> None:
        if extra not in EXTRA_PRICES:
            raise ValueError(f"Extra {extra!r} is not one we offer: {', '.join(EXTRA_PRICES)}.")

    @staticmethod
    def _check_quantity(extra: str, quantity: int) -> None:
        if quantity > EXTRA_LIMITS[extra]:
            raise ValueError(f"A booking can carry at most {EXTRA_LIMITS[extra]} {extra}.")

    def _customer(self, customer_id: str) -> dict:
        if customer_id not in self.customers:
            raise ValueError(f"No customer with id {customer_id!r}.")
        return self.customers[customer_id]

    def _branch(self, branch_id: str) -> dict:
        if branch_id not in self.branches:
            raise ValueError(f"No branch with id {branch_id!r}; branches: {', '.join(sorted(self.branches))}.")
        return self.branches[branch_id]

    def _reservation(self, reservation_id: str) -> dict:
        if reservation_id not in self.reservations:
            raise ValueError(f"No reservation with id {reservation_id!r}.")
        return self.reservations[reservation_id]

    def _plate(self, plate: str) -> str:
        key = _compact(plate) if isinstance(plate, str) else ""
        if key not in self.vehicles:
            raise ValueError(f"No car in the fleet with plate {plate!r}.")
        return key

    def _estimate(self, res: dict) -> float:
        days = max(1, (self._date(res["return_date"], "return_date")
                       - self._date(res["pickup_date"], "pickup_date")).days)
        time = CLASS_RATES[res["vehicle_class"]] * days
        discount = time * LOYALTY_DISCOUNTS[self.customers[res["customer_id"]]["loyalty"]]
        extras = sum(EXTRA_PRICES[e] * q for e, q in res["extras"].items()) * days
        one_way = (ONE_WAY_FEE if self.branches[res["return_branch"]]["city"]
                   != self.branches[res["pickup_branch"]]["city"] else 0.0)
        return round(time - discount + extras + one_way, 2)

    def _customer_record(self, customer_id: str) -> dict:
        record = {"customer_id": customer_id, **copy.deepcopy(self.customers[customer_id])}
        record["reservations"] = [
            {"reservation_id": rid, "vehicle_class": r["vehicle_class"], "pickup_branch": r["pickup_branch"],
             "pickup_date": r["pickup_date"], "return_date": r["return_date"]}
            for rid, r in sorted(self.reservations.items())
            if r["customer_id"] == customer_id and r["status"] == "confirmed"]
        record["open_rental"] = next(
            ({"rental_id": rid, "plate": r["plate"], "due_date": r["due_date"], "return_branch": r["return_branch"]}
             for rid, r in sorted(self.rentals.items()) if r["customer_id"] == customer_id and r["status"] == "open"),
            None)
        return record

    def _reservation_record(self, reservation_id: str) -> dict:
        res = self.reservations[reservation_id]
        return {"reservation_id": reservation_id, **copy.deepcopy(res),
                "customer": self.customers[res["customer_id"]]["name"], "estimated_total": self._estimate(res)}

    def _rental_record(self, rental_id: str) -> dict:
        rental = self.rentals[rental_id]
        car = self.vehicles[rental["plate"]]
        return {"rental_id": rental_id, **copy.deepcopy(rental),
                "customer": self.customers[rental["customer_id"]]["name"],
                "make_model": car["make_model"], "vehicle_class": car["vehicle_class"]}
