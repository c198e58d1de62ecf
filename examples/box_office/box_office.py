"""A theatre's box office as a rods environment (docs/guides/environments.md).

One season at a single theatre: shows, their performances, the seating sections of the house,
patrons and their membership tiers, bookings and gift vouchers, as the box-office system keeps
them. The public attributes are the state; the constructor takes that state as keyword arguments
and derives from it the seats of each section, the seats taken at each performance, each
patron's bookings and the next free patron, booking and voucher numbers.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from datetime import date as Date, timedelta
from types import MappingProxyType
from typing import Literal, get_args

from rods.envs import tool

Section = Literal["stalls", "circle", "balcony", "boxes"]
Tier = Literal["none", "friend", "patron"]
PaidTier = Literal["friend", "patron"]
PaymentMethod = Literal["card", "cash"]
AccessNeed = Literal["wheelchair user", "step-free access", "hearing loop", "audio description",
                     "guide dog", "companion seat"]
RefundReason = Literal["patron request", "performance cancelled", "booked in error"]

TIERS = get_args(Tier)
PAYMENT_METHODS = get_args(PaymentMethod)
ACCESS_NEEDS = get_args(AccessNeed)
REFUND_REASONS = get_args(RefundReason)
#: Share of the ticket price a member does not pay.
DISCOUNTS = MappingProxyType({"none": 0.0, "friend": 0.10, "patron": 0.20})
#: How many days before public booking opens a member may book.
PRIORITY_DAYS = MappingProxyType({"none": 0, "friend": 7, "patron": 14})
#: The yearly fee of each paid membership tier.
MEMBERSHIP_FEES = MappingProxyType({"friend": 60.0, "patron": 250.0})
#: Fee per ticket to exchange a booking to another performance.
EXCHANGE_FEES = MappingProxyType({"none": 5.0, "friend": 2.5, "patron": 0.0})
#: Fee per ticket kept back when a booking is refunded at the patron's request.
REFUND_FEES = MappingProxyType({"none": 3.0, "friend": 0.0, "patron": 0.0})
#: A refund at the patron's request needs the performance to be at least this many days away.
REFUND_WINDOW_DAYS = 7
MAX_TICKETS = 8
VOUCHER_MIN, VOUCHER_MAX = 10.0, 500.0
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _fold(text: str) -> list[str]:
    """The words of a name, lower-case, accents and apostrophes dropped ("O'Hara" -> "ohara")."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", plain.replace("'", ""))


def _digits(phone: str) -> str:
    return re.sub(r"\D", "", phone)


def _money(value: float) -> float:
    return round(float(value) + 1e-9, 2)


class BoxOffice:
    """A theatre's season, seating plan, patrons, bookings and gift vouchers, seen from the box office."""

    def __init__(self, today: str = "2026-04-14", shows: dict[str, dict] | None = None,
                 performances: dict[str, dict] | None = None, sections: dict[str, dict] | None = None,
                 patrons: dict[str, dict] | None = None, bookings: dict[str, dict] | None = None,
                 vouchers: dict[str, dict] | None = None) -> None:
        self._parse_date(today, "today")
        self.today = today
        # show id ("SH-02") -> {"title", "genre", "running_minutes", "public_on_sale" (YYYY-MM-DD)}
        self.shows: dict[str, dict] = copy.deepcopy(shows or {})
        # performance id ("PF-104") -> {"show_id", "date", "time" (HH:MM), "status" ("on sale" or "cancelled"),
        #                              "held_seats" ({section: [seat, ...]}, house seats not for sale)}
        self.performances: dict[str, dict] = copy.deepcopy(performances or {})
        # section name ("stalls") -> {"price", "rows" ({row letter: number of seats}), "wheelchair_spaces"}
        self.sections: dict[str, dict] = copy.deepcopy(sections or {})
        # patron id ("PT-2003") -> {"name", "email", "phone", "tier", "member_since", "access_needs"}
        self.patrons: dict[str, dict] = copy.deepcopy(patrons or {})
        # booking id ("BK-5004") -> {"patron_id", "performance_id", "section", "seats", "price_each", "total",
        #   "fees", "payment_method", "voucher_id", "voucher_amount", "booked_on", "status", "exchanges"}
        #   (plus "refund" once refunded)
        self.bookings: dict[str, dict] = copy.deepcopy(bookings or {})
        # voucher id ("GV-3001") -> {"initial_value", "balance", "issued_on", "expires", "purchaser"}
        self.vouchers: dict[str, dict] = copy.deepcopy(vouchers or {})

        self._seats: dict[str, list[str]] = {
            name: [f"{row}{n}" for row, count in sec.get("rows", {}).items() for n in range(1, int(count) + 1)]
            for name, sec in self.sections.items()}
        self._taken: dict[str, dict[str, set[str]]] = {pid: {} for pid in self.performances}
        self._by_patron: dict[str, list[str]] = {pid: [] for pid in self.patrons}
        for bid, booking in sorted(self.bookings.items()):
            self._by_patron.setdefault(booking["patron_id"], []).append(bid)
            if booking["status"] == "confirmed":
                self._occupy(booking["performance_id"], booking["section"], booking["seats"])
        self._next_patron = 1 + max((int(p.split("-")[1]) for p in self.patrons), default=2000)
        self._next_booking = 1 + max((int(b.split("-")[1]) for b in self.bookings), default=5000)
        self._next_voucher = 1 + max((int(v.split("-")[1]) for v in self.vouchers), default=3000)

    # -- the season ----------------------------------------------------------------------------------------

    @tool("read")
    def list_performances(self, show: str | None = None, date: str | None = None) -> list[dict]:
        """List the performances of a show, or those on a given day.

        With neither, every performance of the season. Each comes with its show, weekday and time, whether
        it is on sale or cancelled, the seats still free, and when booking opens for patrons, friends and
        the public. Sorted by date and time.

        Args:
            show: The show's title or part of it, such as 'Blithe Spirit', or its id, such as 'SH-02'.
            date: Only performances on this day, as YYYY-MM-DD.
        """
        show_ids = list(self.shows)
        if show is not None:
            show_ids = self._match_shows(show)
        if date is not None:
            self._parse_date(date, "date")
        rows = [self._performance_record(pid) for pid, perf in self.performances.items()
                if perf["show_id"] in show_ids and (date is None or perf["date"] == date)]
        return sorted(rows, key=lambda r: (r["date"], r["time"], r["performance_id"]))

    @tool("read")
    def seat_availability(self, performance_id: str, section: Section) -> dict:
        """Show which seats are free in a section at a performance.

        Returns the free seats (row letter and number, such as 'C4'), the free wheelchair spaces among
        them, and the price per seat for non-members, friends and patrons.

        Args:
            performance_id: The performance's id, such as 'PF-104'.
            section: 'stalls', 'circle', 'balcony' or 'boxes'.
        """
        perf = self._performance(performance_id)
        sec = self._section(section)
        if perf["status"] == "cancelled":
            raise ValueError(f"{performance_id} ({self._title(performance_id)}, {perf['date']}) is cancelled.")
        free = self._free_seats(performance_id, section)
        return {"performance_id": performance_id, "show": self._title(performance_id), "date": perf["date"],
                "time": perf["time"], "section": section, "free_seats": free,
                "wheelchair_spaces_free": [s for s in free if s in sec.get("wheelchair_spaces", [])],
                "prices": {tier: self._price(section, tier) for tier in TIERS}}

    # -- patrons -------------------------------------------------------------------------------------------

    @tool("read")
    def find_patron(self, name: str | None = None, email: str | None = None, phone: str | None = None) -> list[dict]:
        """Look up a patron by name, email or phone number.

        Give at least one; all that are given must match. Returns every matching patron (id, name, contact
        details, membership tier, access needs), possibly none.

        Args:
            name: The patron's name or part of it, such as 'Nair' or 'Helen F'; case and accents do not matter.
            email: Their email address, exactly.
            phone: Their phone number or its last digits (at least 4), in any format.
        """
        if not any((name, email, phone)):
            raise ValueError("Give a name, an email address or a phone number to search by.")
        words = _fold(name or "")
        digits = _digits(phone or "")
        if phone and len(digits) < 4:
            raise ValueError(f"Phone {phone!r}: give at least the last 4 digits.")
        found = []
        for pid, patron in sorted(self.patrons.items()):
            names = _fold(patron["name"])
            if words and not all(any(n.startswith(w) for n in names) for w in words):
                continue
            if email and patron["email"].lower() != email.strip().lower():
                continue
            if digits and not _digits(patron["phone"]).endswith(digits):
                continue
            found.append(self._patron_record(pid))
        return found

    @tool("write")
    def register_patron(self, name: str, email: str, phone: str) -> dict:
        """Register a new patron with the box office.

        A new patron starts without membership (tier 'none').

        Args:
            name: Full name, first name first.
            email: Their email address.
            phone: Their phone number, in any format, such as '07700 900412'.
        """
        name = " ".join(str(name).split())
        if not _fold(name):
            raise ValueError("A patron needs a name.")
        email = self._email(email)
        phone = self._phone(phone)
        for pid, patron in sorted(self.patrons.items()):
            if patron["email"].lower() == email:
                raise ValueError(f"{email} is already registered, to {patron['name']} ({pid}).")
        pid = f"PT-{self._next_patron}"
        self._next_patron += 1
        self.patrons[pid] = {"name": name, "email": email, "phone": phone, "tier": "none",
                             "member_since": None, "access_needs": []}
        self._by_patron[pid] = []
        return self._patron_record(pid)

    @tool("write")
    def upgrade_membership(self, patron_id: str, tier: PaidTier, payment_method: PaymentMethod = "card") -> dict:
        """Upgrade a patron's membership to a higher tier and take the yearly fee.

        Friends (60.00 a year) get 10% off tickets and book 7 days before the public; patrons (250.00 a
        year) get 20% off and book 14 days before.

        Args:
            patron_id: The patron's id, such as 'PT-2003'.
            tier: The new tier, 'friend' or 'patron'; it must be above their current one.
            payment_method: How they pay the fee, 'card' or 'cash'.
        """
        patron = self._patron(patron_id)
        if tier not in MEMBERSHIP_FEES:
            raise ValueError(f"Tier {tier!r} is not a membership one can buy; choose 'friend' or 'patron'.")
        self._check_payment(payment_method)
        if TIERS.index(tier) <= TIERS.index(patron["tier"]):
            raise ValueError(f"{patron['name']} is already at tier {patron['tier']!r}; "
                             f"{tier!r} is not an upgrade.")
        patron["tier"] = tier
        if patron["member_since"] is None:
            patron["member_since"] = self.today
        return {**self._patron_record(patron_id), "fee_paid": MEMBERSHIP_FEES[tier],
                "payment_method": payment_method}

    @tool("write")
    def add_access_need(self, patron_id: str, need: AccessNeed, note: str | None = None) -> dict:
        """Record an access need on a patron's account.

        Wheelchair spaces can only be booked for a patron with 'wheelchair user' on their account.

        Args:
            patron_id: The patron's id, such as 'PT-2003'.
            need: 'wheelchair user', 'step-free access', 'hearing loop', 'audio description', 'guide dog'
                or 'companion seat'.
            note: Anything the front-of-house team should know, in a few words.
        """
        patron = self._patron(patron_id)
        if need not in ACCESS_NEEDS:
            raise ValueError(f"Access need {need!r} is not one of: {', '.join(ACCESS_NEEDS)}.")
        if any(entry["need"] == need for entry in patron["access_needs"]):
            raise ValueError(f"{patron['name']} already has {need!r} on their account.")
        note = " ".join(note.split()) if isinstance(note, str) and note.strip() else None
        patron["access_needs"].append({"need": need, "note": note})
        return self._patron_record(patron_id)

    # -- bookings ------------------------------------------------------------------------------------------

    @tool("read")
    def list_bookings(self, patron_id: str | None = None, performance_id: str | None = None) -> list[dict]:
        """List the bookings of a patron, or those for a performance.

        The filters given combine; with none, every booking. Sorted by performance date.

        Args:
            patron_id: Only this patron's bookings, such as 'PT-2003'.
            performance_id: Only bookings for this performance, such as 'PF-104'.
        """
        if patron_id is not None:
            self._patron(patron_id)
            ids = self._by_patron.get(patron_id, [])
        else:
            ids = list(self.bookings)
        if performance_id is not None:
            self._performance(performance_id)
        rows = [self._booking_record(bid) for bid in ids
                if performance_id is None or self.bookings[bid]["performance_id"] == performance_id]
        return sorted(rows, key=lambda r: (r["date"], r["time"], r["booking_id"]))

    @tool("write")
    def book_seats(self, patron_id: str, performance_id: str, section: Section, seats: list[str],
                   payment_method: PaymentMethod = "card", voucher_id: str | None = None) -> dict:
        """Book seats at a performance for a patron.

        The member discount of the patron's tier applies. A gift voucher, if given, pays first and the
        rest is taken by the payment method.

        Args:
            patron_id: The patron's id, such as 'PT-2003'.
            performance_id: The performance's id, such as 'PF-104'.
            section: 'stalls', 'circle', 'balcony' or 'boxes'.
            seats: The seats, such as ['C4', 'C5']; at most 8, all free.
            payment_method: How the rest is paid, 'card' or 'cash'.
            voucher_id: A gift voucher to pay with first, such as 'GV-3001'.
        """
        patron = self._patron(patron_id)
        self._check_payment(payment_method)
        self._check_bookable(patron_id, performance_id)
        seats = self._check_seats(patron_id, performance_id, section, seats)
        price_each = self._price(section, patron["tier"])
        total = _money(price_each * len(seats))
        voucher_amount = 0.0
        if voucher_id is not None:
            voucher = self._usable_voucher(voucher_id)
            voucher_amount = min(voucher["balance"], total)
            voucher["balance"] = _money(voucher["balance"] - voucher_amount)
        bid = f"BK-{self._next_booking}"
        self._next_booking += 1
        self.bookings[bid] = {"patron_id": patron_id, "performance_id": performance_id, "section": section,
                              "seats": seats, "price_each": price_each, "total": total, "fees": 0.0,
                              "payment_method": payment_method, "voucher_id": voucher_id,
                              "voucher_amount": voucher_amount, "booked_on": self.today, "status": "confirmed",
                              "exchanges": []}
        self._by_patron.setdefault(patron_id, []).append(bid)
        self._occupy(performance_id, section, seats)
        return {**self._booking_record(bid), "charged": {payment_method: _money(total - voucher_amount),
                                                         "voucher": voucher_amount}}

    @tool("write")
    def exchange_booking(self, booking_id: str, performance_id: str, seats: list[str],
                         section: Section | None = None) -> dict:
        """Exchange a booking to another performance of the same show.

        Allowed until the day before the booked performance. The fee per ticket is 5.00 for non-members,
        2.50 for friends and nothing for patrons (nothing either if the booked performance was cancelled);
        a dearer seat costs the difference, a cheaper one refunds nothing. Both go on the booking's
        payment method. The booking keeps its id and its number of seats.

        Args:
            booking_id: The booking's id, such as 'BK-5004'.
            performance_id: The performance to move to, such as 'PF-105'.
            seats: The new seats, as many as the booking has, such as ['C4', 'C5'].
            section: The new section; leave out to keep the booking's section.
        """
        booking = self._booking(booking_id)
        if booking["status"] != "confirmed":
            raise ValueError(f"{booking_id} is {booking['status']}; only a confirmed booking can be exchanged.")
        old_perf = self.performances[booking["performance_id"]]
        if old_perf["status"] != "cancelled" and old_perf["date"] <= self.today:
            raise ValueError(f"{booking_id} is for {old_perf['date']}; exchanges close the day before the "
                             f"performance (today is {self.today}).")
        new_perf = self._performance(performance_id)
        if performance_id == booking["performance_id"]:
            raise ValueError(f"{booking_id} is already for {performance_id}.")
        if new_perf["show_id"] != old_perf["show_id"]:
            raise ValueError(f"{performance_id} is {self._title(performance_id)}, but {booking_id} is for "
                             f"{self._title(booking['performance_id'])}; exchanges stay within the same show.")
        patron_id = booking["patron_id"]
        self._check_bookable(patron_id, performance_id)
        section = booking["section"] if section is None else section
        seats = self._check_seats(patron_id, performance_id, section, seats)
        if len(seats) != len(booking["seats"]):
            raise ValueError(f"{booking_id} has {len(booking['seats'])} seats; give as many new seats "
                             f"(got {len(seats)}).")
        tier = self.patrons[patron_id]["tier"]
        price_each = self._price(section, tier)
        difference = _money(max(0.0, (price_each - booking["price_each"]) * len(seats)))
        fee = 0.0 if old_perf["status"] == "cancelled" else _money(EXCHANGE_FEES[tier] * len(seats))
        self._release(booking["performance_id"], booking["section"], booking["seats"])
        booking["exchanges"].append({"on": self.today, "from_performance": booking["performance_id"],
                                     "from_section": booking["section"], "from_seats": list(booking["seats"]),
                                     "fee": fee, "difference": difference})
        booking.update(performance_id=performance_id, section=section, seats=seats,
                       price_each=max(price_each, booking["price_each"]),
                       total=_money(booking["total"] + difference), fees=_money(booking["fees"] + fee))
        self._occupy(performance_id, section, seats)
        return {**self._booking_record(booking_id), "exchange_fee": fee, "price_difference": difference,
                "charged": {booking["payment_method"]: _money(fee + difference)}}

    @tool("write")
    def refund_booking(self, booking_id: str, reason: RefundReason) -> dict:
        """Refund a booking and release its seats.

        A cancelled performance, or a booking made in error and refunded the same day, is refunded in
        full. At the patron's request the performance must be at least 7 days away; non-members then
        lose 3.00 per ticket. Exchange fees are not refunded. A gift voucher used to pay is refilled
        first, the rest goes back to the booking's payment method.

        Args:
            booking_id: The booking's id, such as 'BK-5004'.
            reason: 'patron request', 'performance cancelled' or 'booked in error'.
        """
        booking = self._booking(booking_id)
        if reason not in REFUND_REASONS:
            raise ValueError(f"Reason {reason!r} is not one of: {', '.join(REFUND_REASONS)}.")
        if booking["status"] != "confirmed":
            raise ValueError(f"{booking_id} is already {booking['status']}.")
        perf = self.performances[booking["performance_id"]]
        tier = self.patrons[booking["patron_id"]]["tier"]
        amount = booking["total"]
        if perf["status"] == "cancelled":
            amount = _money(booking["total"] + booking["fees"])
        elif reason == "performance cancelled":
            raise ValueError(f"{booking['performance_id']} on {perf['date']} is not cancelled.")
        elif reason == "booked in error":
            if booking["booked_on"] != self.today:
                raise ValueError(f"{booking_id} was booked on {booking['booked_on']}; a booking made in error "
                                 f"is refunded only on the day it was made.")
        else:
            days = (self._parse_date(perf["date"], "date") - self._parse_date(self.today, "today")).days
            if days < REFUND_WINDOW_DAYS:
                raise ValueError(f"{booking_id} is for {perf['date']}, {days} days away; refunds at the patron's "
                                 f"request close {REFUND_WINDOW_DAYS} days before the performance. "
                                 f"An exchange is still possible.")
            amount = _money(max(0.0, booking["total"] - REFUND_FEES[tier] * len(booking["seats"])))
        to_voucher = min(booking["voucher_amount"], amount) if booking["voucher_id"] else 0.0
        if to_voucher and booking["voucher_id"] in self.vouchers:
            voucher = self.vouchers[booking["voucher_id"]]
            voucher["balance"] = _money(voucher["balance"] + to_voucher)
        else:
            to_voucher = 0.0
        to_payment = _money(amount - to_voucher)
        self._release(booking["performance_id"], booking["section"], booking["seats"])
        booking["status"] = "refunded"
        booking["refund"] = {"on": self.today, "reason": reason, "amount": amount, "to_voucher": to_voucher,
                             "to_payment_method": to_payment}
        return self._booking_record(booking_id)

    # -- gift vouchers -------------------------------------------------------------------------------------

    @tool("read")
    def check_voucher(self, voucher_id: str) -> dict:
        """Check a gift voucher's balance and expiry date.

        Args:
            voucher_id: The voucher's code, such as 'GV-3001'.
        """
        voucher = self._voucher(voucher_id)
        expired = voucher["expires"] < self.today
        return {"voucher_id": voucher_id, **copy.deepcopy(voucher), "expired": expired,
                "usable": not expired and voucher["balance"] > 0}

    @tool("write")
    def issue_gift_voucher(self, amount: float, purchaser: str, payment_method: PaymentMethod = "card") -> dict:
        """Sell a gift voucher of a given amount to a purchaser.

        The voucher is valid for 12 months from today.

        Args:
            amount: Its value, 10.00 to 500.00 in steps of 5.
            purchaser: The buyer's full name.
            payment_method: How they pay, 'card' or 'cash'.
        """
        try:
            value = _money(amount)
        except (TypeError, ValueError):
            raise ValueError(f"Amount {amount!r} is not a number.") from None
        if not VOUCHER_MIN <= value <= VOUCHER_MAX or value % 5:
            raise ValueError(f"Amount {value:.2f} must be between {VOUCHER_MIN:.2f} and {VOUCHER_MAX:.2f}, "
                             f"in steps of 5.")
        purchaser = " ".join(str(purchaser).split())
        if not _fold(purchaser):
            raise ValueError("A gift voucher needs the purchaser's name.")
        self._check_payment(payment_method)
        today = self._parse_date(self.today, "today")
        try:
            expires = today.replace(year=today.year + 1)
        except ValueError:  # 29 February
            expires = today.replace(year=today.year + 1, day=28)
        vid = f"GV-{self._next_voucher}"
        self._next_voucher += 1
        self.vouchers[vid] = {"initial_value": value, "balance": value, "issued_on": self.today,
                              "expires": expires.isoformat(), "purchaser": purchaser}
        return {**self.check_voucher(vid), "payment_method": payment_method}

    # -- helpers -------------------------------------------------------------------------------------------

    @staticmethod
    def _parse_date(value: str, what: str) -> Date:
        if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
            raise ValueError(f"{what} {value!r} is not a date as YYYY-MM-DD.")
        try:
            return Date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{what} {value!r} is not a real date.") from None

    @staticmethod
    def _email(email: str) -> str:
        email = str(email).strip().lower()
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", email):
            raise ValueError(f"Email {email!r} is not an email address.")
        return email

    @staticmethod
    def _phone(phone: str) -> str:
        phone = " ".join(str(phone).split())
        if not 10 <= len(_digits(phone)) <= 13:
            raise ValueError(f"Phone {phone!r} needs 10 to 13 digits.")
        return phone

    @staticmethod
    def _check_payment(method: str) -> None:
        if method not in PAYMENT_METHODS:
            raise ValueError(f"Payment method {method!r} is not accepted; use {' or '.join(PAYMENT_METHODS)}.")

    def _patron(self, patron_id: str) -> dict:
        if patron_id not in self.patrons:
            raise ValueError(f"No patron with id {patron_id!r}.")
        return self.patrons[patron_id]

    def _performance(self, performance_id: str) -> dict:
        if performance_id not in self.performances:
            raise ValueError(f"No performance with id {performance_id!r}.")
        return self.performances[performance_id]

    def _section(self, section: str) -> dict:
        if section not in self.sections:
            raise ValueError(f"No section {section!r}; sections: {', '.join(self.sections)}.")
        return self.sections[section]

    def _booking(self, booking_id: str) -> dict:
        if booking_id not in self.bookings:
            raise ValueError(f"No booking with id {booking_id!r}.")
        return self.bookings[booking_id]

    def _voucher(self, voucher_id: str) -> dict:
        if voucher_id not in self.vouchers:
            raise ValueError(f"No gift voucher with code {voucher_id!r}.")
        return self.vouchers[voucher_id]

    def _usable_voucher(self, voucher_id: str) -> dict:
        voucher = self._voucher(voucher_id)
        if voucher["expires"] < self.today:
            raise ValueError(f"Gift voucher {voucher_id} expired on {voucher['expires']}.")
        if voucher["balance"] <= 0:
            raise ValueError(f"Gift voucher {voucher_id} has nothing left on it.")
        return voucher

    def _match_shows(self, show: str) -> list[str]:
        if show in self.shows:
            return [show]
        words = _fold(show)
        found = [sid for sid, s in sorted(self.shows.items())
                 if words and all(any(t.startswith(w) for t in _fold(s["title"])) for w in words)]
        if not found:
            titles = ", ".join(s["title"] for s in self.shows.values())
            raise ValueError(f"No show matches {show!r}; this season: {titles}.")
        return found

    def _title(self, performance_id: str) -> str:
        return self.shows.get(self.performances[performance_id]["show_id"], {}).get("title", "?")

    def _price(self, section: str, tier: str) -> float:
        return _money(self.sections[section]["price"] * (1 - DISCOUNTS[tier]))

    def _opens(self, show_id: str) -> dict[str, str]:
        """When each tier may start booking a show."""
        public = self._parse_date(self.shows[show_id]["public_on_sale"], "public_on_sale")
        return {tier: (public - timedelta(days=PRIORITY_DAYS[tier])).isoformat() for tier in reversed(TIERS)}

    def _occupy(self, performance_id: str, section: str, seats: list[str]) -> None:
        self._taken.setdefault(performance_id, {}).setdefault(section, set()).update(seats)

    def _release(self, performance_id: str, section: str, seats: list[str]) -> None:
        self._taken.get(performance_id, {}).get(section, set()).difference_update(seats)

    def _free_seats(self, performance_id: str, section: str) -> list[str]:
        held = set(self.performances[performance_id].get("held_seats", {}).get(section, []))
        taken = self._taken.get(performance_id, {}).get(section, set())
        return [s for s in self._seats.get(section, []) if s not in held and s not in taken]

    def _check_bookable(self, patron_id: str, performance_id: str) -> None:
        """Refuse a performance the patron cannot book today."""
        perf = self._performance(performance_id)
        if perf["status"] == "cancelled":
            raise ValueError(f"{performance_id} ({self._title(performance_id)}, {perf['date']}) is cancelled.")
        if perf["date"] < self.today:
            raise ValueError(f"{performance_id} was on {perf['date']}; today is {self.today}.")
        patron = self.patrons[patron_id]
        opens = self._opens(perf["show_id"])[patron["tier"]]
        if self.today < opens:
            raise ValueError(f"Booking for {self._title(performance_id)} opens on {opens} for tier "
                             f"{patron['tier']!r} ({patron['name']}); today is {self.today}.")

    def _check_seats(self, patron_id: str, performance_id: str, section: str, seats: list[str]) -> list[str]:
        """The seats, if the patron may book them all in that section at that performance."""
        sec = self._section(section)
        if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
            raise ValueError(f"Seats must be a list of seat labels such as ['C4', 'C5'], not {seats!r}.")
        seats = [s.strip().upper() for s in seats]
        if not seats:
            raise ValueError("Give at least one seat.")
        if len(seats) > MAX_TICKETS:
            raise ValueError(f"At most {MAX_TICKETS} seats per booking; got {len(seats)}.")
        if len(set(seats)) != len(seats):
            raise ValueError(f"A seat is listed twice in {seats}.")
        unknown = [s for s in seats if s not in self._seats.get(section, [])]
        if unknown:
            raise ValueError(f"No seat {', '.join(unknown)} in the {section}.")
        free = set(self._free_seats(performance_id, section))
        gone = [s for s in seats if s not in free]
        if gone:
            raise ValueError(f"{', '.join(gone)} in the {section} at {performance_id} is not free.")
        patron = self.patrons[patron_id]
        spaces = [s for s in seats if s in sec.get("wheelchair_spaces", [])]
        if spaces and not any(e["need"] == "wheelchair user" for e in patron["access_needs"]):
            raise ValueError(f"{', '.join(spaces)} is a wheelchair space; {patron['name']} has no 'wheelchair user' "
                             f"need on their account.")
        return seats

    def _performance_record(self, performance_id: str) -> dict:
        perf = self.performances[performance_id]
        day = self._parse_date(perf["date"], "date")
        free = 0 if perf["status"] == "cancelled" else sum(len(self._free_seats(performance_id, s))
                                                          for s in self.sections)
        return {"performance_id": performance_id, "show_id": perf["show_id"], "show": self._title(performance_id),
                "date": perf["date"], "weekday": WEEKDAY_NAMES[day.weekday()], "time": perf["time"],
                "status": perf["status"], "seats_free": free, "booking_opens": self._opens(perf["show_id"])}

    def _patron_record(self, patron_id: str) -> dict:
        return {"patron_id": patron_id, **copy.deepcopy(self.patrons[patron_id])}

    def _booking_record(self, booking_id: str) -> dict:
        booking = self.bookings[booking_id]
        perf = self.performances.get(booking["performance_id"], {})
        return {"booking_id": booking_id, **copy.deepcopy(booking),
                "patron": self.patrons.get(booking["patron_id"], {}).get("name"),
                "show": self._title(booking["performance_id"]) if perf else None,
                "date": perf.get("date"), "time": perf.get("time")}
