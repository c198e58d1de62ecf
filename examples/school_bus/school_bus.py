"""A school district's transportation office as a rods environment.

The district's schools with their bell times and field-trip budgets, the bus stops, the fleet of
buses, the drivers, the daily routes (one bus and one driver each, morning pick-up times per stop),
the students who ride them and the field trips schools book. The public attributes are the state;
the constructor takes that state as keyword arguments and derives from it the next free field-trip
number. `today` is part of the state, so every call gives the same answer.
"""

from __future__ import annotations

import copy
import math
import re
import unicodedata
from datetime import date as Date
from types import MappingProxyType
from typing import Literal, get_args

from rods.envs import tool

BusKind = Literal["full-size", "lift", "mini"]
BusStatus = Literal["in-service", "in-shop"]
TripStatus = Literal["requested", "scheduled", "cancelled"]
RemovalReason = Literal["moved", "withdrawn", "parent-transport", "suspended", "other"]

#: Seats of each kind of bus; a lift bus also carries wheelchair riders, the only kind that may.
BUS_SEATS = MappingProxyType({"full-size": 72, "lift": 44, "mini": 24})
BUS_KINDS = get_args(BusKind)
BUS_STATUSES = get_args(BusStatus)
REMOVAL_REASONS = get_args(RemovalReason)
MILE_RATE = 3.10             # dollars per round-trip mile, per bus, charged to the school
DRIVER_HOURLY = 42.00        # dollars per driver hour on a trip (at least MIN_TRIP_HOURS)
MIN_TRIP_HOURS = 3.0
NOTICE_DAYS = 10             # a field trip is requested at least this many days ahead
LATE_CANCEL_DAYS = 3         # a scheduled trip cancelled fewer days ahead than this ...
LATE_CANCEL_FEE = 150.00     # ... costs the school this (the drivers are paid anyway)
STUDENTS_PER_CHAPERONE = 10  # at least one adult per ten students on a trip
AFTER_BELL_MIN = 20          # a route's bus and driver are free this long after the school's bell
BEFORE_DISMISSAL_MIN = 30    # ... and must be back this long before its dismissal
FIRST_PICKUP = "06:15"       # no pick-up earlier than this
MAX_STOPS = 12               # stops on one route
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"(\d{1,2}):(\d{2})")


def _words(text: str) -> list[str]:
    """Lower-case words of a name, accents and apostrophes dropped ("Chloé O'Hara" -> ["chloe", "ohara"])."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", plain.replace("'", ""))


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


class BusDispatch:
    """A district's schools, stops, buses, drivers, routes, riders and field trips, seen from the transportation
    office."""

    def __init__(self, today: str = "2026-10-07", schools: dict[str, dict] | None = None,
                 stops: dict[str, dict] | None = None, buses: dict[str, dict] | None = None,
                 drivers: dict[str, dict] | None = None, routes: dict[str, dict] | None = None,
                 students: dict[str, dict] | None = None, field_trips: dict[str, dict] | None = None) -> None:
        self._date(today, "today")
        self.today = today
        # school id ("SCH-LIN") -> {"name", "grade_min", "grade_max" (0 = kindergarten), "bell_time", "dismissal",
        #                           "field_trip_budget" (dollars left this year)}
        self.schools: dict[str, dict] = copy.deepcopy(schools or {})
        # stop id ("ST-104") -> {"name" (the corner, "Maple Ave & Birch St"), "zone"}
        self.stops: dict[str, dict] = copy.deepcopy(stops or {})
        # bus number ("BUS-17") -> {"kind", "seats", "status", "mileage", "notes"}
        self.buses: dict[str, dict] = copy.deepcopy(buses or {})
        # driver id ("DRV-08") -> {"name", "phone", "cdl_expiry", "status": "active" | "on-leave"}
        self.drivers: dict[str, dict] = copy.deepcopy(drivers or {})
        # route id ("RT-L2") -> {"school_id", "bus_id", "driver_id", "stops" ([{"stop_id", "time"}] by time), "notes"}
        self.routes: dict[str, dict] = copy.deepcopy(routes or {})
        # student id ("STU-40217") -> {"name", "grade", "school_id", "address", "route_id", "stop_id",
        #                              "needs_lift", "guardian", "guardian_phone", "notes"}
        self.students: dict[str, dict] = copy.deepcopy(students or {})
        # trip id ("FT-312") -> {"school_id", "date", "destination", "depart_time", "return_time", "students",
        #     "chaperones", "round_trip_miles", "bus_ids", "driver_ids", "cost", "status", "notes"}
        #     (+ "cancellation_fee", "cancel_reason" once cancelled)
        self.field_trips: dict[str, dict] = copy.deepcopy(field_trips or {})
        self._next_trip = 1 + max((int(k.split("-")[1]) for k in self.field_trips), default=300)

    # -- looking things up ---------------------------------------------------------------------------------

    @tool("read")
    def get_district_info(self) -> dict:
        """Tell today's date and list the district's schools.

        Returns:
            Today's date as YYYY-MM-DD and its weekday, and each school's id, name, grades (0 is kindergarten),
            bell and dismissal times and what is left of its field-trip budget this year.
        """
        return {"today": self.today, "weekday": WEEKDAY_NAMES[self._date(self.today, "today").weekday()],
                "schools": [{"school_id": sid, **copy.deepcopy(school)}
                            for sid, school in sorted(self.schools.items())]}

    @tool("read")
    def find_student(self, name: str | None = None, school_id: str | None = None,
                     guardian_phone: str | None = None) -> list[dict]:
        """Look up students by name, school or a parent's phone number.

        Give at least one; all that are given must match.

        Args:
            name: The student's name or part of it, such as 'Castellanos' or 'Ava C'; case and accents do not matter.
            school_id: Only students of this school, such as 'SCH-LIN'.
            guardian_phone: The parent's or guardian's phone number, or its last 4 or more digits, in any format.

        Returns:
            Every matching student (possibly none): id, name, grade (0 is kindergarten), school, address, guardian,
            whether they need a wheelchair lift, notes, and their route, stop and morning pick-up time if they ride.
        """
        if not any((name, school_id, guardian_phone)):
            raise ValueError("Give a name, a school or a guardian's phone number to search by.")
        if school_id is not None:
            self._school(school_id)
        words = _words(name or "")
        digits = _digits(guardian_phone or "")
        if guardian_phone and len(digits) < 4:
            raise ValueError(f"Phone {guardian_phone!r}: give at least the last 4 digits.")
        found = []
        for sid, student in sorted(self.students.items()):
            names = _words(student["name"])
            if words and not all(any(n.startswith(w) for n in names) for w in words):
                continue
            if school_id is not None and student["school_id"] != school_id:
                continue
            if digits and not _digits(student["guardian_phone"]).endswith(digits):
                continue
            found.append(self._student_record(sid))
        return found

    @tool("read")
    def find_stops(self, near: str) -> list[dict]:
        """Find bus stops by a street or corner name.

        Args:
            near: A street or part of a corner's name, such as 'Birch' or 'Maple Ave & Birch'.

        Returns:
            Each stop whose name has all the words given: its id, name, zone, and the routes that stop there with
            their morning pick-up time.
        """
        words = _words(near or "")
        if not words:
            raise ValueError("Give a street name to search stops by.")
        found = []
        for stop_id, stop in sorted(self.stops.items()):
            names = _words(stop["name"])
            if not all(any(n.startswith(w) for n in names) for w in words):
                continue
            served = [{"route_id": rid, "school": self.schools[r["school_id"]]["name"], "time": s["time"]}
                      for rid, r in sorted(self.routes.items()) for s in r["stops"] if s["stop_id"] == stop_id]
            found.append({"stop_id": stop_id, **copy.deepcopy(stop), "routes": served})
        return found

    @tool("read")
    def list_routes(self, school_id: str | None = None, stop_id: str | None = None) -> list[dict]:
        """List the daily bus routes, optionally of one school or through one stop.

        Args:
            school_id: Only routes serving this school, such as 'SCH-HAW'.
            stop_id: Only routes that stop here, such as 'ST-107'.

        Returns:
            Each route with its school (bell and dismissal times), bus (kind and seats), driver, its stops in order
            with morning pick-up times and riders at each, how many ride in all and how many seats are free, and notes.
        """
        if school_id is not None:
            self._school(school_id)
        if stop_id is not None:
            self._stop(stop_id)
        return [self._route_record(rid) for rid, r in sorted(self.routes.items())
                if (school_id is None or r["school_id"] == school_id)
                and (stop_id is None or any(s["stop_id"] == stop_id for s in r["stops"]))]

    @tool("read")
    def list_fleet(self, date: str | None = None) -> dict:
        """List the district's buses and drivers, with the routes they run.

        Args:
            date: Also show which field trips each bus and driver is booked on that day, as YYYY-MM-DD.

        Returns:
            The buses (number, kind, seats, status, mileage, notes, routes) and the drivers (id, name, phone, CDL
            expiry, status, routes); with a date, each one's scheduled field trips on that day.
        """
        if date is not None:
            self._date(date, "date")
        buses = []
        for bid, bus in sorted(self.buses.items()):
            row = {"bus_id": bid, **copy.deepcopy(bus),
                   "routes": [rid for rid, r in sorted(self.routes.items()) if r["bus_id"] == bid]}
            if date is not None:
                row["trips"] = [tid for tid, t in sorted(self.field_trips.items())
                                if t["status"] == "scheduled" and t["date"] == date and bid in t["bus_ids"]]
            buses.append(row)
        drivers = []
        for did, driver in sorted(self.drivers.items()):
            row = {"driver_id": did, **copy.deepcopy(driver),
                   "routes": [rid for rid, r in sorted(self.routes.items()) if r["driver_id"] == did]}
            if date is not None:
                row["trips"] = [tid for tid, t in sorted(self.field_trips.items())
                                if t["status"] == "scheduled" and t["date"] == date and did in t["driver_ids"]]
            drivers.append(row)
        return {"buses": buses, "drivers": drivers}

    @tool("read")
    def list_field_trips(self, school_id: str | None = None, date: str | None = None,
                         status: TripStatus | None = None) -> list[dict]:
        """List field trips by school, day or status; with no filter, every trip on file, by date.

        Args:
            school_id: Only this school's trips, such as 'SCH-LIN'.
            date: Only trips on this day, as YYYY-MM-DD.
            status: Only trips in this status.

        Returns:
            Each trip with its school, day, destination, times, head counts, miles, buses and drivers, cost, status
            and notes.
        """
        if school_id is not None:
            self._school(school_id)
        if date is not None:
            self._date(date, "date")
        if status is not None and status not in get_args(TripStatus):
            raise ValueError(f"Status {status!r} is not one of: {', '.join(get_args(TripStatus))}.")
        rows = [self._trip_record(tid) for tid, t in self.field_trips.items()
                if (school_id is None or t["school_id"] == school_id) and (date is None or t["date"] == date)
                and (status is None or t["status"] == status)]
        return sorted(rows, key=lambda t: (t["date"], t["trip_id"]))

    # -- riders and routes ---------------------------------------------------------------------------------

    @tool("write")
    def assign_student_to_route(self, student_id: str, route_id: str, stop_id: str) -> dict:
        """Put a student on a route, picked up at one of its stops (moving them off any route they ride now).

        The route must serve the student's school and stop at that stop, and its bus must have a free seat; a
        student who needs a wheelchair lift rides only a lift bus.

        Args:
            student_id: The student, such as 'STU-40217'.
            route_id: The route, such as 'RT-L2'.
            stop_id: The stop where they get on, such as 'ST-104'.

        Returns:
            The student's record with their new route, stop and pick-up time.
        """
        student = self._student(student_id)
        route = self._route(route_id)
        self._stop(stop_id)
        if route["school_id"] != student["school_id"]:
            raise ValueError(f"{route_id} serves {self.schools[route['school_id']]['name']}; {student['name']} "
                             f"attends {self.schools[student['school_id']]['name']}.")
        if not any(s["stop_id"] == stop_id for s in route["stops"]):
            raise ValueError(f"{route_id} does not stop at {stop_id} ({self.stops[stop_id]['name']}).")
        bus = self.buses[route["bus_id"]]
        if student["needs_lift"] and bus["kind"] != "lift":
            raise ValueError(f"{student['name']} needs a wheelchair lift; {route_id} runs {route['bus_id']}, "
                             f"a {bus['kind']} bus.")
        if student["route_id"] != route_id and self._riders(route_id) >= bus["seats"]:
            raise ValueError(f"{route_id} is full: {bus['seats']} seats on {route['bus_id']}, all taken.")
        student["route_id"] = route_id
        student["stop_id"] = stop_id
        return self._student_record(student_id)

    @tool("write")
    def remove_student_from_route(self, student_id: str, reason: RemovalReason, note: str | None = None) -> dict:
        """Take a student off their bus route; the reason is written into their notes.

        Args:
            student_id: The student, such as 'STU-40217'.
            reason: Why they no longer ride.
            note: Anything the office wants to add, in the staff member's words.

        Returns:
            The student's record, now without a route.
        """
        student = self._student(student_id)
        if reason not in REMOVAL_REASONS:
            raise ValueError(f"Reason {reason!r} is not one of: {', '.join(REMOVAL_REASONS)}.")
        if student["route_id"] is None:
            raise ValueError(f"{student['name']} does not ride a bus.")
        line = f"{self.today}: off {student['route_id']} ({reason})"
        note = " ".join((note or "").split())
        if note:
            line += f" - {note}"
        student["notes"] = f"{student['notes']}; {line}" if student["notes"] else line
        student["route_id"] = None
        student["stop_id"] = None
        return self._student_record(student_id)

    @tool("write")
    def add_stop_to_route(self, route_id: str, stop_id: str, pickup_time: str) -> dict:
        """Add a stop to a route's morning run at a pick-up time (the afternoon run serves it in reverse).

        The time must be free on the route, no earlier than 06:15 and at least 10 minutes before the school's
        bell; a route has at most 12 stops.

        Args:
            route_id: The route, such as 'RT-H1'.
            stop_id: The stop to add, such as 'ST-111'.
            pickup_time: The morning pick-up time as HH:MM (24-hour), such as '07:12'.

        Returns:
            The route with its stops in their new order.
        """
        route = self._route(route_id)
        self._stop(stop_id)
        minutes = self._time(pickup_time, "pickup_time")
        if any(s["stop_id"] == stop_id for s in route["stops"]):
            raise ValueError(f"{route_id} already stops at {stop_id}.")
        if len(route["stops"]) >= MAX_STOPS:
            raise ValueError(f"{route_id} already has {MAX_STOPS} stops, the most a route may have.")
        bell = self._time(self.schools[route["school_id"]]["bell_time"], "bell_time")
        if minutes < self._time(FIRST_PICKUP, "first pick-up") or minutes > bell - 10:
            raise ValueError(f"Pick-up at {_hhmm(minutes)} must be between {FIRST_PICKUP} and {_hhmm(bell - 10)} "
                             f"(the bell is at {_hhmm(bell)}).")
        if any(self._time(s["time"], "time") == minutes for s in route["stops"]):
            raise ValueError(f"{route_id} already has a stop at {_hhmm(minutes)}.")
        route["stops"] = sorted(route["stops"] + [{"stop_id": stop_id, "time": _hhmm(minutes)}],
                                key=lambda s: s["time"])
        return self._route_record(route_id)

    @tool("write")
    def reassign_route(self, route_id: str, bus_id: str | None = None, driver_id: str | None = None) -> dict:
        """Put another bus or another driver (or both) on a route.

        The bus must be in service, seat everyone who rides the route (and carry a lift if a rider needs one) and
        not already run another route to the same school; the driver must be active, with a CDL that has not
        expired, and not already drive another route to the same school. Neither may be booked on a coming field
        trip that keeps them out past 20 minutes after that school's bell or 30 minutes before its dismissal.

        Args:
            route_id: The route, such as 'RT-L1'.
            bus_id: The bus to run it, such as 'BUS-22'.
            driver_id: The driver to drive it, such as 'DRV-05'.

        Returns:
            The route with its new bus and driver.
        """
        route = self._route(route_id)
        if bus_id is None and driver_id is None:
            raise ValueError("Give a bus, a driver or both.")
        if bus_id is not None:
            bus = self._bus(bus_id)
            if bus["status"] != "in-service":
                raise ValueError(f"{bus_id} is {bus['status']}.")
            clash = self._same_school_route(route_id, "bus_id", bus_id)
            if clash:
                raise ValueError(f"{bus_id} already runs {clash} to the same school.")
            riders = self._riders(route_id)
            if riders > bus["seats"]:
                raise ValueError(f"{bus_id} has {bus['seats']} seats; {riders} students ride {route_id}.")
            lift = [s["name"] for s in self.students.values() if s["route_id"] == route_id and s["needs_lift"]]
            if lift and bus["kind"] != "lift":
                raise ValueError(f"{', '.join(lift)} on {route_id} need a lift bus; {bus_id} is {bus['kind']}.")
        if driver_id is not None:
            driver = self._driver(driver_id)
            if driver["status"] != "active":
                raise ValueError(f"{driver['name']} is {driver['status']}.")
            if driver["cdl_expiry"] < self.today:
                raise ValueError(f"{driver['name']}'s CDL expired on {driver['cdl_expiry']}.")
            clash = self._same_school_route(route_id, "driver_id", driver_id)
            if clash:
                raise ValueError(f"{driver['name']} already drives {clash} to the same school.")
        for field, key in (("bus_ids", bus_id), ("driver_ids", driver_id)):
            if key is not None:
                self._check_trips_fit(route_id, field, key)
        if bus_id is not None:
            route["bus_id"] = bus_id
        if driver_id is not None:
            route["driver_id"] = driver_id
        return self._route_record(route_id)

    @tool("write")
    def set_bus_status(self, bus_id: str, status: BusStatus, note: str | None = None) -> dict:
        """Send a bus to the shop or put it back in service, with a note on why.

        A bus still assigned to a route, or to a scheduled field trip from today on, cannot go to the shop: move
        those to another bus first.

        Args:
            bus_id: The bus, such as 'BUS-09'.
            status: Its new status.
            note: What is wrong or what was fixed, in the staff member's words; it replaces the bus's notes.

        Returns:
            The bus with its new status and notes.
        """
        bus = self._bus(bus_id)
        if status not in BUS_STATUSES:
            raise ValueError(f"Status {status!r} is not one of: {', '.join(BUS_STATUSES)}.")
        if bus["status"] == status:
            raise ValueError(f"{bus_id} is already {status}.")
        if status == "in-shop":
            routes = [rid for rid, r in sorted(self.routes.items()) if r["bus_id"] == bus_id]
            trips = [tid for tid, t in sorted(self.field_trips.items()) if t["status"] == "scheduled"
                     and t["date"] >= self.today and bus_id in t["bus_ids"]]
            if routes or trips:
                raise ValueError(f"{bus_id} is still assigned to {', '.join(routes + trips)}; "
                                 "put another bus on them first.")
        bus["status"] = status
        note = " ".join((note or "").split())
        if note:
            bus["notes"] = note
        return {"bus_id": bus_id, **copy.deepcopy(bus)}

    # -- field trips ---------------------------------------------------------------------------------------

    @tool("write")
    def request_field_trip(self, school_id: str, date: str, destination: str, students: int, chaperones: int,
                           depart_time: str, return_time: str, round_trip_miles: int,
                           notes: str | None = None) -> dict:
        """Book a field trip for a school; its estimated cost is set aside from the school's field-trip budget.

        A trip is on a school day (Monday to Friday) at least 10 days from today, with one adult chaperone per
        10 students or part of it. The estimate assumes full-size buses (72 seats): per bus, $3.10 a round-trip
        mile and $42 an hour of driver time (at least 3 hours, counted in half hours). Buses and drivers are
        assigned later with schedule_field_trip.

        Args:
            school_id: The school, such as 'SCH-HAW'.
            date: The day of the trip, as YYYY-MM-DD.
            destination: Where they go, such as 'Franklin Science Museum'.
            students: How many students go.
            chaperones: How many adults go with them.
            depart_time: When the buses leave the school, as HH:MM (24-hour).
            return_time: When they are back at the school, as HH:MM (24-hour).
            round_trip_miles: Miles there and back.
            notes: Anything the drivers should know, in the caller's words.

        Returns:
            The new trip with its id, the buses it will need, its estimated cost and the budget left.
        """
        school = self._school(school_id)
        day = self._date(date, "date")
        if (day - self._date(self.today, "today")).days < NOTICE_DAYS:
            raise ValueError(f"Field trips need {NOTICE_DAYS} days' notice; {date} is too soon "
                             f"(today is {self.today}).")
        if day.weekday() >= 5:
            raise ValueError(f"{date} is a {WEEKDAY_NAMES[day.weekday()]}; field trips run on school days only.")
        destination = " ".join((destination or "").split())
        if not destination:
            raise ValueError("Say where the trip goes.")
        for value, what, least in ((students, "students", 1), (chaperones, "chaperones", 1),
                                   (round_trip_miles, "round_trip_miles", 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{what} {value!r} must be a whole number of at least {least}.")
        needed = math.ceil(students / STUDENTS_PER_CHAPERONE)
        if chaperones < needed:
            raise ValueError(f"{students} students need at least {needed} chaperones; {chaperones} given.")
        start, end = self._time(depart_time, "depart_time"), self._time(return_time, "return_time")
        if end <= start:
            raise ValueError(f"Return at {_hhmm(end)} must be after departure at {_hhmm(start)}.")
        buses = math.ceil((students + chaperones) / BUS_SEATS["full-size"])
        cost = self._cost(buses, round_trip_miles, start, end)
        if cost > school["field_trip_budget"]:
            raise ValueError(f"The trip would cost ${cost:.2f}; {school['name']} has "
                             f"${school['field_trip_budget']:.2f} "
                             "left in its field-trip budget.")
        school["field_trip_budget"] = round(school["field_trip_budget"] - cost, 2)
        tid = f"FT-{self._next_trip}"
        self._next_trip += 1
        self.field_trips[tid] = {"school_id": school_id, "date": date, "destination": destination,
                                 "depart_time": _hhmm(start), "return_time": _hhmm(end), "students": students,
                                 "chaperones": chaperones, "round_trip_miles": round_trip_miles, "bus_ids": [],
                                 "driver_ids": [], "cost": cost, "status": "requested",
                                 "notes": " ".join((notes or "").split())}
        return {**self._trip_record(tid), "buses_needed": buses, "budget_left": school["field_trip_budget"]}

    @tool("write")
    def schedule_field_trip(self, trip_id: str, bus_ids: list[str], driver_ids: list[str]) -> dict:
        """Assign the buses and drivers of a requested field trip, one driver per bus; the cost is recomputed.

        The buses must be in service and seat everyone going; drivers active, with a CDL valid on the trip day.
        None may be on another trip that day at overlapping times. A bus or driver that runs a route is free only
        from 20 minutes after that school's bell until 30 minutes before its dismissal.

        Args:
            trip_id: The trip, such as 'FT-305'.
            bus_ids: The buses, such as ['BUS-12', 'BUS-31'].
            driver_ids: The drivers, as many as buses, such as ['DRV-03', 'DRV-11'].

        Returns:
            The scheduled trip with its buses, drivers, final cost and the school's budget left.
        """
        trip = self._trip(trip_id)
        if trip["status"] != "requested":
            raise ValueError(f"{trip_id} is {trip['status']}; only a requested trip can be scheduled.")
        if not bus_ids or len(set(bus_ids)) != len(bus_ids) or len(set(driver_ids)) != len(driver_ids):
            raise ValueError("Give at least one bus, and no bus or driver twice.")
        if len(bus_ids) != len(driver_ids):
            raise ValueError(f"{len(bus_ids)} buses need {len(bus_ids)} drivers; {len(driver_ids)} given.")
        start, end = self._time(trip["depart_time"], "depart_time"), self._time(trip["return_time"], "return_time")
        seats = 0
        for bid in bus_ids:
            bus = self._bus(bid)
            if bus["status"] != "in-service":
                raise ValueError(f"{bid} is {bus['status']}.")
            self._check_free("bus_ids", bid, bid, trip_id, trip, start, end)
            seats += bus["seats"]
        riders = trip["students"] + trip["chaperones"]
        if seats < riders:
            raise ValueError(f"{', '.join(bus_ids)} seat {seats}; {riders} are going.")
        for did in driver_ids:
            driver = self._driver(did)
            if driver["status"] != "active":
                raise ValueError(f"{driver['name']} is {driver['status']}.")
            if driver["cdl_expiry"] < trip["date"]:
                raise ValueError(f"{driver['name']}'s CDL expires on {driver['cdl_expiry']}, before {trip['date']}.")
            self._check_free("driver_ids", did, driver["name"], trip_id, trip, start, end)
        school = self.schools[trip["school_id"]]
        cost = self._cost(len(bus_ids), trip["round_trip_miles"], start, end)
        if cost - trip["cost"] > school["field_trip_budget"]:
            raise ValueError(f"With {len(bus_ids)} buses the trip costs ${cost:.2f}; {school['name']} has only "
                             f"${school['field_trip_budget']:.2f} left beyond the ${trip['cost']:.2f} set aside.")
        school["field_trip_budget"] = round(school["field_trip_budget"] + trip["cost"] - cost, 2)
        trip.update(bus_ids=list(bus_ids), driver_ids=list(driver_ids), cost=cost, status="scheduled")
        return {**self._trip_record(trip_id), "budget_left": school["field_trip_budget"]}

    @tool("write")
    def cancel_field_trip(self, trip_id: str, reason: str) -> dict:
        """Cancel a field trip and give its cost back to the school's budget.

        A scheduled trip cancelled less than 3 days before it runs costs the school a $150 fee.

        Args:
            trip_id: The trip, such as 'FT-305'.
            reason: Why, in the caller's words.

        Returns:
            The cancelled trip, the fee charged (if any) and the school's budget left.
        """
        trip = self._trip(trip_id)
        if trip["status"] == "cancelled":
            raise ValueError(f"{trip_id} is already cancelled.")
        if trip["date"] < self.today:
            raise ValueError(f"{trip_id} ran on {trip['date']}; it cannot be cancelled now.")
        reason = " ".join((reason or "").split())
        if not reason:
            raise ValueError("Give a reason for the cancellation.")
        days = (self._date(trip["date"], "date") - self._date(self.today, "today")).days
        fee = LATE_CANCEL_FEE if trip["status"] == "scheduled" and days < LATE_CANCEL_DAYS else 0.0
        school = self.schools[trip["school_id"]]
        school["field_trip_budget"] = round(school["field_trip_budget"] + trip["cost"] - fee, 2)
        trip.update(status="cancelled", cancellation_fee=fee, cancel_reason=reason)
        return {**self._trip_record(trip_id), "budget_left": school["field_trip_budget"]}

    # -- helpers -------------------------------------------------------------------------------------------

    @staticmethod
    def _date(value: str, what: str) -> Date:
        if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
            raise ValueError(f"{what} {value!r} is not a date as YYYY-MM-DD.")
        try:
            return Date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{what} {value!r} is not a real date.") from None

    @staticmethod
    def _time(value: str, what: str) -> int:
        """Minutes after midnight of an HH:MM time."""
        match = _TIME.fullmatch(value.strip()) if isinstance(value, str) else None
        if not match or int(match[1]) > 23 or int(match[2]) > 59:
            raise ValueError(f"{what} {value!r} is not a time as HH:MM (24-hour).")
        return int(match[1]) * 60 + int(match[2])

    @staticmethod
    def _cost(buses: int, miles: int, start: int, end: int) -> float:
        hours = max(MIN_TRIP_HOURS, math.ceil((end - start) / 30) / 2)
        return round(buses * (miles * MILE_RATE + hours * DRIVER_HOURLY), 2)

    def _check_free(self, field: str, key: str, label: str, trip_id: str, trip: dict, start: int, end: int) -> None:
        """Refuse a bus or driver booked on an overlapping trip that day, or whose routes leave no room for it."""
        for tid, other in sorted(self.field_trips.items()):
            if (tid != trip_id and other["status"] == "scheduled" and other["date"] == trip["date"]
                    and key in other[field]
                    and self._time(other["depart_time"], "t") < end and start < self._time(other["return_time"], "t")):
                raise ValueError(f"{label} is on {tid} ({other['depart_time']}-{other['return_time']}) that day.")
        route_field = "bus_id" if field == "bus_ids" else "driver_id"
        for rid, route in sorted(self.routes.items()):
            if route[route_field] != key:
                continue
            school = self.schools[route["school_id"]]
            free_from = self._time(school["bell_time"], "bell_time") + AFTER_BELL_MIN
            free_until = self._time(school["dismissal"], "dismissal") - BEFORE_DISMISSAL_MIN
            if start < free_from or end > free_until:
                raise ValueError(f"{label} runs {rid} for {school['name']} and is free only "
                                 f"{_hhmm(free_from)}-{_hhmm(free_until)}.")

    def _check_trips_fit(self, route_id: str, field: str, key: str) -> None:
        """Refuse a bus or driver whose scheduled trips from today on overlap the route's runs."""
        school = self.schools[self.routes[route_id]["school_id"]]
        free_from = self._time(school["bell_time"], "bell_time") + AFTER_BELL_MIN
        free_until = self._time(school["dismissal"], "dismissal") - BEFORE_DISMISSAL_MIN
        for tid, trip in sorted(self.field_trips.items()):
            if (trip["status"] == "scheduled" and trip["date"] >= self.today and key in trip[field]
                    and (self._time(trip["depart_time"], "t") < free_from
                         or self._time(trip["return_time"], "t") > free_until)):
                raise ValueError(f"{key} is on {tid} on {trip['date']} ({trip['depart_time']}-{trip['return_time']}), "
                                 f"which overlaps {route_id}'s runs for {school['name']}.")

    def _same_school_route(self, route_id: str, field: str, key: str) -> str | None:
        school_id = self.routes[route_id]["school_id"]
        return next((rid for rid, r in sorted(self.routes.items())
                     if rid != route_id and r[field] == key and r["school_id"] == school_id), None)

    def _riders(self, route_id: str) -> int:
        return sum(s["route_id"] == route_id for s in self.students.values())

    def _school(self, school_id: str) -> dict:
        if school_id not in self.schools:
            raise ValueError(f"No school with id {school_id!r}; schools: {', '.join(sorted(self.schools))}.")
        return self.schools[school_id]

    def _stop(self, stop_id: str) -> dict:
        if stop_id not in self.stops:
            raise ValueError(f"No stop with id {stop_id!r}.")
        return self.stops[stop_id]

    def _bus(self, bus_id: str) -> dict:
        if bus_id not in self.buses:
            raise ValueError(f"No bus numbered {bus_id!r}.")
        return self.buses[bus_id]

    def _driver(self, driver_id: str) -> dict:
        if driver_id not in self.drivers:
            raise ValueError(f"No driver with id {driver_id!r}.")
        return self.drivers[driver_id]

    def _route(self, route_id: str) -> dict:
        if route_id not in self.routes:
            raise ValueError(f"No route {route_id!r}.")
        return self.routes[route_id]

    def _student(self, student_id: str) -> dict:
        if student_id not in self.students:
            raise ValueError(f"No student with id {student_id!r}.")
        return self.students[student_id]

    def _trip(self, trip_id: str) -> dict:
        if trip_id not in self.field_trips:
            raise ValueError(f"No field trip with id {trip_id!r}.")
        return self.field_trips[trip_id]

    def _student_record(self, student_id: str) -> dict:
        student = self.students[student_id]
        record = {"student_id": student_id, **copy.deepcopy(student),
                  "school": self.schools[student["school_id"]]["name"]}
        route = self.routes.get(student["route_id"]) if student["route_id"] else None
        if route is not None:
            stop = next((s for s in route["stops"] if s["stop_id"] == student["stop_id"]), None)
            record["stop"] = self.stops[student["stop_id"]]["name"] if student["stop_id"] in self.stops else None
            record["pickup_time"] = stop["time"] if stop else None
            record["bus_id"] = route["bus_id"]
        return record

    def _route_record(self, route_id: str) -> dict:
        route = self.routes[route_id]
        school = self.schools[route["school_id"]]
        bus = self.buses[route["bus_id"]]
        riders = self._riders(route_id)
        return {
            "route_id": route_id, "school_id": route["school_id"], "school": school["name"],
            "bell_time": school["bell_time"], "dismissal": school["dismissal"],
            "bus_id": route["bus_id"], "bus_kind": bus["kind"], "seats": bus["seats"],
            "driver_id": route["driver_id"], "driver": self.drivers[route["driver_id"]]["name"],
            "stops": [{"stop_id": s["stop_id"], "name": self.stops[s["stop_id"]]["name"], "time": s["time"],
                       "riders": sum(st["route_id"] == route_id and st["stop_id"] == s["stop_id"]
                                     for st in self.students.values())} for s in route["stops"]],
            "riders": riders, "seats_free": bus["seats"] - riders, "notes": route["notes"],
        }

    def _trip_record(self, trip_id: str) -> dict:
        trip = self.field_trips[trip_id]
        return {"trip_id": trip_id, **copy.deepcopy(trip), "school": self.schools[trip["school_id"]]["name"]}
