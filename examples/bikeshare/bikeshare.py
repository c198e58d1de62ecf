"""City bike-share operations as a rods environment (docs/guides/environments.md).

The back office of a docked bike-share scheme: stations with a fixed number of
docks, classic bikes and e-bikes, members on a plan with a prepaid balance,
rides that are started and ended (and sometimes refunded), and repair tickets
that take a bike out of service. Times are the system clock's local time as
ISO strings to the minute ("2025-06-14T08:40"); `now` is that clock, fixed for a
task so that everything is deterministic. Money is in dollars, to the cent.
"""

from __future__ import annotations

import copy
import math
from datetime import datetime
from typing import Any, Literal

from rods.envs import tool

TIME_FORMAT = "%Y-%m-%dT%H:%M"

# Tariffs per plan: unlock fee, minutes included on a classic bike, and the price of each further minute by bike
# kind (e-bike minutes are never included). Read only: the tools never change a tariff.
TARIFFS: dict[str, tuple[float, int, float, float]] = {
    #                unlock  included  classic/min  e-bike/min
    "pay_as_you_go": (1.00, 0, 0.20, 0.35),
    "monthly": (0.00, 45, 0.15, 0.15),
    "annual": (0.00, 45, 0.10, 0.12),
}
BIKE_KINDS = ("classic", "ebike")
MIN_UNLOCK_BATTERY = 20  # percent: an e-bike below this stays docked
PRIORITIES = ("low", "normal", "urgent")
RIDE_STATUSES = ("in_progress", "completed")
Issue = Literal["flat_tyre", "brakes", "chain", "battery", "lock", "damage", "other"]
RefundReason = Literal["bike_fault", "dock_fault", "overcharge", "goodwill"]


def _money(value: float) -> float:
    return round(value, 2) + 0.0  # to the cent; + 0.0 turns -0.0 into 0.0


def _number_after_dash(ids: Any) -> int:
    return max((int(str(i).rsplit("-", 1)[-1]) for i in ids if str(i).rsplit("-", 1)[-1].isdigit()), default=0)


class BikeShare:
    """Stations, bikes, members, rides and repair tickets of one city's scheme.

    The public attributes are the state (each map keyed by its record's id):

    * `now`: the system clock, "YYYY-MM-DDTHH:MM".
    * `stations`: station id -> {"name", "neighbourhood", "capacity", "status"}; status "active" or
      "out_of_service".
    * `bikes`: bike id -> {"kind", "battery", "status", "station_id"}; kind "classic" or "ebike", battery a
      percentage (None on a classic bike), status "available", "in_use" or "maintenance", station_id None
      while it is out on a ride.
    * `members`: member id -> {"name", "email", "plan", "balance", "status"}; plan a key of TARIFFS, balance
      the prepaid credit in dollars (negative when the member owes), status "active" or "suspended".
    * `rides`: ride id -> {"member_id", "bike_id", "start_station_id", "end_station_id", "start_time",
      "end_time", "fare", "refunded", "status"}; fare None until the ride ends.
    * `tickets`: ticket id -> {"bike_id", "issue", "priority", "note", "opened_at", "status", "resolution",
      "closed_at"}; status "open" or "closed".

    Derived in the constructor and kept up to date by the tools: the bikes docked at each station and the
    next ride and ticket numbers.
    """

    def __init__(
        self,
        now: str = "2025-06-01T08:00",
        stations: dict[str, dict] | None = None,
        bikes: dict[str, dict] | None = None,
        members: dict[str, dict] | None = None,
        rides: dict[str, dict] | None = None,
        tickets: dict[str, dict] | None = None,
    ) -> None:
        self.now = datetime.strptime(now, TIME_FORMAT).strftime(TIME_FORMAT)
        self.stations: dict[str, dict] = copy.deepcopy(stations or {})
        self.bikes: dict[str, dict] = copy.deepcopy(bikes or {})
        self.members: dict[str, dict] = copy.deepcopy(members or {})
        self.rides: dict[str, dict] = copy.deepcopy(rides or {})
        self.tickets: dict[str, dict] = copy.deepcopy(tickets or {})
        self._docked: dict[str, list[str]] = {station_id: [] for station_id in self.stations}
        for bike_id, bike in sorted(self.bikes.items()):
            if bike["kind"] not in BIKE_KINDS:
                raise ValueError(f"bike {bike_id}: unknown kind {bike['kind']!r}")
            where = bike.get("station_id")
            if where is None:
                continue
            if where not in self._docked:
                raise ValueError(f"bike {bike_id} is docked at unknown station {where!r}")
            self._docked[where].append(bike_id)
        for station_id, docked in self._docked.items():
            if len(docked) > self.stations[station_id]["capacity"]:
                raise ValueError(f"station {station_id} holds {len(docked)} bikes in "
                                 f"{self.stations[station_id]['capacity']} docks")
        self._next_ride = _number_after_dash(self.rides) + 1
        self._next_ticket = _number_after_dash(self.tickets) + 1

    # -- lookups -------------------------------------------------------------------------------------------------

    def _station(self, station_id: str) -> dict:
        if station_id not in self.stations:
            raise ValueError(f"No station with id {station_id!r}; station ids look like 'ST-101'.")
        return self.stations[station_id]

    def _bike(self, bike_id: str) -> dict:
        if bike_id not in self.bikes:
            raise ValueError(f"No bike with id {bike_id!r}; bike ids look like 'BK-4410'.")
        return self.bikes[bike_id]

    def _member(self, member_id: str) -> dict:
        if member_id not in self.members:
            raise ValueError(f"No member with id {member_id!r}; member ids look like 'M-20417'.")
        return self.members[member_id]

    def _ride(self, ride_id: str) -> dict:
        if ride_id not in self.rides:
            raise ValueError(f"No ride with id {ride_id!r}; ride ids look like 'R-7702'.")
        return self.rides[ride_id]

    def _ticket(self, ticket_id: str) -> dict:
        if ticket_id not in self.tickets:
            raise ValueError(f"No repair ticket with id {ticket_id!r}; ticket ids look like 'MT-0301'.")
        return self.tickets[ticket_id]

    def _open_ride(self, *, member_id: str | None = None, bike_id: str | None = None) -> str | None:
        for ride_id, ride in sorted(self.rides.items()):
            if ride["status"] == "in_progress" and (ride["member_id"] == member_id or ride["bike_id"] == bike_id):
                return ride_id
        return None

    def _open_tickets(self, bike_id: str) -> list[str]:
        return [t for t, ticket in sorted(self.tickets.items())
                if ticket["bike_id"] == bike_id and ticket["status"] == "open"]

    def _free_docks(self, station_id: str) -> int:
        return self.stations[station_id]["capacity"] - len(self._docked[station_id])

    def _station_name(self, station_id: str | None) -> str | None:
        return None if station_id is None else self.stations.get(station_id, {}).get("name")

    def _ride_view(self, ride_id: str) -> dict:
        ride = self.rides[ride_id]
        return {"ride_id": ride_id, **ride,
                "start_station": self._station_name(ride["start_station_id"]),
                "end_station": self._station_name(ride["end_station_id"])}

    def _member_view(self, member_id: str) -> dict:
        return {"member_id": member_id, **self.members[member_id]}

    def _fare(self, plan: str, kind: str, minutes: int) -> float:
        unlock, included, classic_rate, ebike_rate = TARIFFS[plan]
        if kind == "ebike":
            return _money(unlock + ebike_rate * minutes)
        return _money(unlock + classic_rate * max(0, minutes - included))

    def _parse_time(self, value: str) -> datetime:
        today = self.now[:10]
        text = value.strip().replace(" ", "T")
        if len(text) <= 5:  # "8:22" or "08:22": today
            text = f"{today}T{text.zfill(5)}"
        try:
            return datetime.fromisoformat(text).replace(second=0, microsecond=0)
        except ValueError:
            raise ValueError(f"Cannot read the time {value!r}; give 'HH:MM' for today or 'YYYY-MM-DDTHH:MM'.") from None

    # -- tools: reading ------------------------------------------------------------------------------------------

    @tool("read")
    def list_stations(self, neighbourhood: str | None = None) -> list[dict]:
        """Show the stations with how many bikes and free docks each one has.

        Counts of classic bikes and e-bikes include only bikes that can be ridden now (not those under repair).

        Args:
            neighbourhood: Only the stations in this neighbourhood, e.g. 'Old Town'; every station when left out.
        """
        wanted = (neighbourhood or "").strip().lower()
        out = []
        for station_id, station in sorted(self.stations.items()):
            if wanted and station["neighbourhood"].lower() != wanted:
                continue
            ready = [self.bikes[b] for b in self._docked[station_id] if self.bikes[b]["status"] == "available"]
            out.append({"station_id": station_id, **station,
                        "classic_bikes": sum(b["kind"] == "classic" for b in ready),
                        "ebikes": sum(b["kind"] == "ebike" for b in ready),
                        "free_docks": self._free_docks(station_id)})
        if wanted and not out:
            known = sorted({s["neighbourhood"] for s in self.stations.values()})
            raise ValueError(f"No stations in neighbourhood {neighbourhood!r}; neighbourhoods: {', '.join(known)}.")
        return out

    @tool("read")
    def get_station(self, station_id: str) -> dict:
        """Show which bikes are docked at a station right now.

        Args:
            station_id: The station's id, e.g. 'ST-103'.
        """
        station = self._station(station_id)
        docked = [{"bike_id": b, "kind": self.bikes[b]["kind"], "battery": self.bikes[b]["battery"],
                   "status": self.bikes[b]["status"]} for b in self._docked[station_id]]
        return {"station_id": station_id, **station, "free_docks": self._free_docks(station_id), "bikes": docked}

    @tool("read")
    def find_member(self, name: str | None = None, email: str | None = None) -> list[dict]:
        """Look up a member by name or email address.

        Args:
            name: All or part of the member's name; case does not matter.
            email: The member's email address, exactly as registered.
        """
        if not (name or "").strip() and not (email or "").strip():
            raise ValueError("Give a name or an email address to search for.")
        found = []
        for member_id, member in sorted(self.members.items()):
            if name and name.strip().lower() not in member["name"].lower():
                continue
            if email and email.strip().lower() != member["email"].lower():
                continue
            found.append(self._member_view(member_id))
        return found

    @tool("read")
    def get_member_rides(self, member_id: str, status: str | None = None) -> list[dict]:
        """List a member's rides, most recent first.

        Args:
            member_id: The member's id, e.g. 'M-20417'.
            status: 'in_progress' for the ride they are on now, 'completed' for finished rides; all rides when
                left out.
        """
        self._member(member_id)
        if status is not None and status not in RIDE_STATUSES:
            raise ValueError(f"Unknown ride status {status!r}; use one of: {', '.join(RIDE_STATUSES)}.")
        mine = [r for r, ride in self.rides.items()
                if ride["member_id"] == member_id and status in (None, ride["status"])]
        mine.sort(key=lambda r: (self.rides[r]["start_time"], r), reverse=True)
        return [self._ride_view(r) for r in mine]

    @tool("read")
    def get_bike(self, bike_id: str) -> dict:
        """Check a bike: where it is, its battery, whether it is out on a ride, and its repair tickets.

        Args:
            bike_id: The number on the bike's frame, e.g. 'BK-4410'.
        """
        bike = self._bike(bike_id)
        tickets = [{"ticket_id": t, **ticket} for t, ticket in sorted(self.tickets.items())
                   if ticket["bike_id"] == bike_id]
        return {"bike_id": bike_id, **bike, "station": self._station_name(bike["station_id"]),
                "current_ride_id": self._open_ride(bike_id=bike_id), "tickets": tickets}

    # -- tools: acting -------------------------------------------------------------------------------------------

    @tool("write")
    def unlock_bike(self, member_id: str, bike_id: str) -> dict:
        """Unlock a docked bike for a member, which starts their ride.

        The member must be active, must not owe money and must not be on another ride; an e-bike needs at
        least 20% battery.

        Args:
            member_id: The member who will ride, e.g. 'M-20417'.
            bike_id: The bike to release from its dock, e.g. 'BK-4410'.
        """
        member, bike = self._member(member_id), self._bike(bike_id)
        if member["status"] != "active":
            raise ValueError(f"Member {member_id} is {member['status']} and cannot start rides.")
        if member["balance"] < 0:
            raise ValueError(f"Member {member_id} owes ${-member['balance']:.2f}; the balance must be settled "
                             "before a new ride.")
        if (ongoing := self._open_ride(member_id=member_id)) is not None:
            raise ValueError(f"Member {member_id} is already on ride {ongoing}; end it before unlocking another bike.")
        if bike["status"] == "maintenance":
            tickets = ", ".join(self._open_tickets(bike_id)) or "no ticket"
            raise ValueError(f"Bike {bike_id} is under repair ({tickets}) and cannot be unlocked.")
        if bike["status"] == "in_use" or bike["station_id"] is None:
            raise ValueError(f"Bike {bike_id} is out on a ride, not docked.")
        if bike["kind"] == "ebike" and (bike["battery"] or 0) < MIN_UNLOCK_BATTERY:
            raise ValueError(f"E-bike {bike_id} has {bike['battery']}% battery; at least {MIN_UNLOCK_BATTERY}% is "
                             "needed to unlock it.")
        station_id = bike["station_id"]
        ride_id = f"R-{self._next_ride}"
        self._next_ride += 1
        self.rides[ride_id] = {"member_id": member_id, "bike_id": bike_id, "start_station_id": station_id,
                               "end_station_id": None, "start_time": self.now, "end_time": None, "fare": None,
                               "refunded": 0.0, "status": "in_progress"}
        self._docked[station_id].remove(bike_id)
        bike.update(status="in_use", station_id=None)
        return self._ride_view(ride_id)

    @tool("write")
    def end_ride(self, ride_id: str, station_id: str, end_time: str | None = None) -> dict:
        """End a ride by docking its bike at a station, e.g. when a dock did not register a return.

        The fare is charged to the member's balance. Tariffs: pay-as-you-go $1.00 to unlock, then $0.20 a
        minute on a classic bike or $0.35 on an e-bike; monthly and annual plans have no unlock fee and
        include the first 45 minutes on a classic bike, then $0.15 (monthly) or $0.10 (annual) a minute;
        e-bikes cost $0.15 (monthly) or $0.12 (annual) a minute from the start.

        Args:
            ride_id: The ride to end, e.g. 'R-7714'.
            station_id: The station where the bike was docked, e.g. 'ST-103'.
            end_time: When the bike was docked: 'HH:MM' for today or 'YYYY-MM-DDTHH:MM'; now when left out.
        """
        ride, station = self._ride(ride_id), self._station(station_id)
        if ride["status"] != "in_progress":
            raise ValueError(f"Ride {ride_id} already ended at {ride['end_time']}.")
        if station["status"] != "active":
            raise ValueError(f"Station {station_id} ({station['name']}) is {station['status']}; bikes cannot be "
                             "docked there.")
        if self._free_docks(station_id) <= 0:
            raise ValueError(f"Station {station_id} ({station['name']}) is full: all {station['capacity']} docks "
                             "are taken.")
        start = datetime.strptime(ride["start_time"], TIME_FORMAT)
        end = self._parse_time(end_time) if end_time else datetime.strptime(self.now, TIME_FORMAT)
        if end < start:
            raise ValueError(f"Ride {ride_id} started at {ride['start_time']}; it cannot end at "
                             f"{end.strftime(TIME_FORMAT)}.")
        if end > datetime.strptime(self.now, TIME_FORMAT):
            raise ValueError(f"The end time {end.strftime(TIME_FORMAT)} is in the future (it is {self.now}).")
        member, bike = self.members[ride["member_id"]], self.bikes[ride["bike_id"]]
        minutes = math.ceil((end - start).total_seconds() / 60)
        fare = self._fare(member["plan"], bike["kind"], minutes)
        ride.update(end_station_id=station_id, end_time=end.strftime(TIME_FORMAT), fare=fare, status="completed")
        member["balance"] = _money(member["balance"] - fare)
        bike.update(status="available", station_id=station_id)
        self._docked[station_id].append(ride["bike_id"])
        self._docked[station_id].sort()
        return {**self._ride_view(ride_id), "minutes": minutes, "member_balance": member["balance"]}

    @tool("write")
    def refund_ride(self, ride_id: str, amount: float, reason: RefundReason) -> dict:
        """Refund part or all of a ride's fare to the member's balance.

        Args:
            ride_id: The completed ride to refund, e.g. 'R-7702'.
            amount: How many dollars to give back; at most what was charged for the ride less earlier refunds.
            reason: Why the money goes back.
        """
        ride = self._ride(ride_id)
        if ride["status"] != "completed":
            raise ValueError(f"Ride {ride_id} is still in progress; end it before refunding.")
        if amount <= 0:
            raise ValueError("The refund amount must be more than $0.00.")
        refundable = _money(ride["fare"] - ride["refunded"])
        if _money(amount) > refundable:
            raise ValueError(f"Cannot refund ${amount:.2f} on ride {ride_id}: it was charged ${ride['fare']:.2f} "
                             f"and ${refundable:.2f} of that is left to refund.")
        member = self.members[ride["member_id"]]
        ride["refunded"] = _money(ride["refunded"] + amount)
        member["balance"] = _money(member["balance"] + amount)
        return {"ride_id": ride_id, "member_id": ride["member_id"], "refunded_now": _money(amount),
                "reason": reason, "refunded_total": ride["refunded"], "fare": ride["fare"],
                "member_balance": member["balance"]}

    @tool("write")
    def report_issue(self, bike_id: str, issue: Issue, priority: str = "normal", note: str = "") -> dict:
        """Report a problem with a bike: open a repair ticket and take the bike out of service.

        Args:
            bike_id: The bike with the problem, e.g. 'BK-4415'.
            issue: What is wrong with it.
            priority: 'low', 'normal' or 'urgent'.
            note: Anything the mechanic should know, in a few words.
        """
        bike = self._bike(bike_id)
        if priority not in PRIORITIES:
            raise ValueError(f"Unknown priority {priority!r}; use one of: {', '.join(PRIORITIES)}.")
        if bike["status"] == "in_use":
            raise ValueError(f"Bike {bike_id} is out on ride {self._open_ride(bike_id=bike_id)}; end the ride "
                             "before taking the bike out of service.")
        if issue == "battery" and bike["kind"] != "ebike":
            raise ValueError(f"Bike {bike_id} is a classic bike and has no battery.")
        for ticket_id in self._open_tickets(bike_id):
            if self.tickets[ticket_id]["issue"] == issue:
                raise ValueError(f"Ticket {ticket_id} is already open for {issue} on bike {bike_id}.")
        ticket_id = f"MT-{self._next_ticket:04d}"
        self._next_ticket += 1
        self.tickets[ticket_id] = {"bike_id": bike_id, "issue": issue, "priority": priority, "note": note,
                                   "opened_at": self.now, "status": "open", "resolution": None, "closed_at": None}
        bike["status"] = "maintenance"
        return {"ticket_id": ticket_id, **self.tickets[ticket_id], "bike_status": bike["status"]}

    @tool("write")
    def close_ticket(self, ticket_id: str, resolution: str) -> dict:
        """Close a repair ticket once the bike is fixed; the bike goes back into service when no other ticket is
        open on it. Closing a battery ticket means the battery was swapped for a full one.

        Args:
            ticket_id: The repair ticket, e.g. 'MT-0301'.
            resolution: What was done to fix the bike, in a few words.
        """
        ticket = self._ticket(ticket_id)
        if ticket["status"] != "open":
            raise ValueError(f"Ticket {ticket_id} was already closed at {ticket['closed_at']}.")
        if not resolution.strip():
            raise ValueError("Say what was done to fix the bike.")
        ticket.update(status="closed", resolution=resolution.strip(), closed_at=self.now)
        bike = self.bikes[ticket["bike_id"]]
        if ticket["issue"] == "battery" and bike["kind"] == "ebike":
            bike["battery"] = 100
        if not self._open_tickets(ticket["bike_id"]) and bike["status"] == "maintenance":
            bike["status"] = "available"
        return {"ticket_id": ticket_id, **ticket, "bike_status": bike["status"]}

    @tool("write")
    def move_bike(self, bike_id: str, to_station_id: str) -> dict:
        """Move a docked bike to another station with the rebalancing van.

        Args:
            bike_id: The bike to move, e.g. 'BK-4460'.
            to_station_id: The station to dock it at, e.g. 'ST-101'.
        """
        bike, station = self._bike(bike_id), self._station(to_station_id)
        origin = bike["station_id"]
        if origin is None:
            raise ValueError(f"Bike {bike_id} is out on ride {self._open_ride(bike_id=bike_id)}, not docked.")
        if origin == to_station_id:
            raise ValueError(f"Bike {bike_id} is already at {to_station_id} ({station['name']}).")
        if station["status"] != "active":
            raise ValueError(f"Station {to_station_id} ({station['name']}) is {station['status']}.")
        if self._free_docks(to_station_id) <= 0:
            raise ValueError(f"Station {to_station_id} ({station['name']}) is full: all {station['capacity']} "
                             "docks are taken.")
        self._docked[origin].remove(bike_id)
        self._docked[to_station_id].append(bike_id)
        self._docked[to_station_id].sort()
        bike["station_id"] = to_station_id
        return {"bike_id": bike_id, "from_station_id": origin, "to_station_id": to_station_id,
                "free_docks_left": self._free_docks(to_station_id)}

    @tool("write")
    def change_plan(self, member_id: str, plan: str) -> dict:
        """Switch a member to another plan; rides from now on are priced on the new plan.

        Args:
            member_id: The member, e.g. 'M-20433'.
            plan: The plan to move to, written as on member records.
        """
        member = self._member(member_id)
        if plan not in TARIFFS:
            raise ValueError(f"Unknown plan {plan!r}; plans are: {', '.join(TARIFFS)}.")
        if member["plan"] == plan:
            raise ValueError(f"Member {member_id} is already on the {plan} plan.")
        previous, member["plan"] = member["plan"], plan
        return {**self._member_view(member_id), "previous_plan": previous}
