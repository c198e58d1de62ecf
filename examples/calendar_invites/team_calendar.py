"""A team calendar with meeting invitations, as a rods environment (docs/guides/environments.md).

The office keeps one shared calendar: people (by handle, e.g. "amara.okafor"), bookable rooms and
events with their invitees' answers. All times are wall-clock times in the office's time zone,
written "HH:MM" (24-hour); dates are "YYYY-MM-DD". There is no clock: `today` is part of the state.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from datetime import date as Date
from typing import Any, Literal

from rods.envs import tool

#: The kinds of event the calendar knows (the `kind` of `schedule_event`).
EventKind = Literal["meeting", "one_on_one", "interview", "workshop", "social"]
EVENT_KINDS = ("meeting", "one_on_one", "interview", "workshop", "social")
#: What an invitee may answer.
RESPONSES = ("accepted", "tentative", "declined")
#: Where an invitee's answer can stand: not answered yet, or one of `RESPONSES`.
RSVP_STATES = ("needs_action", *RESPONSES)
#: What a room may be equipped with.
EQUIPMENT = ("video", "projector", "whiteboard")
#: The working day `find_free_slots` searches.
WORKDAY_START, WORKDAY_END = "09:00", "18:00"

_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_EVENT_ID = re.compile(r"^EV-(\d+)$")


def _day(value: str, what: str = "date") -> Date:
    """A "YYYY-MM-DD" text as a date; ValueError naming `what` otherwise."""
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        raise ValueError(f"{what} must be a date written YYYY-MM-DD, not {value!r}")
    try:
        return Date.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"{what} {value!r} is not a date on the calendar") from None


def _minutes(value: str, what: str = "time") -> int:
    """An "HH:MM" (24-hour) text as minutes after midnight; ValueError naming `what` otherwise."""
    found = _TIME.match(value.strip()) if isinstance(value, str) else None
    if not found:
        raise ValueError(f"{what} must be a 24-hour time written HH:MM, not {value!r}")
    return int(found.group(1)) * 60 + int(found.group(2))


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _fold(text: str) -> str:
    """Lower case without accents, so that "Ramirez" finds "Ramírez"."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


class TeamCalendar:
    """The office's shared calendar. Its public attributes are the state:

    * `today`: the current day, "YYYY-MM-DD";
    * `time_zone`: the office's time zone (IANA name), in which every event time is written;
    * `people`: handle -> {"name", "email", "team", "title", "time_zone"};
    * `rooms`: room name -> {"capacity", "floor", "equipment": [...]};
    * `events`: event id ("EV-3307") -> {"title", "kind", "organizer", "date", "start", "end", "room"
      (a room name or None), "attendees": {handle: "needs_action" | "accepted" | "tentative" | "declined"},
      "status": "confirmed" | "cancelled", "notes"}, plus "cancel_reason" once cancelled.

    The organizer of an event is not among its attendees: they are taken to attend it.
    """

    def __init__(self, today: str = "2025-01-06", time_zone: str = "Europe/London",
                 people: dict[str, dict[str, Any]] | None = None,
                 rooms: dict[str, dict[str, Any]] | None = None,
                 events: dict[str, dict[str, Any]] | None = None) -> None:
        self.today = _day(today, "today").isoformat()  # the calendar's "now": set by the caller, never the clock
        self.time_zone = time_zone
        self.people: dict[str, dict[str, Any]] = copy.deepcopy(people or {})
        self.rooms: dict[str, dict[str, Any]] = copy.deepcopy(rooms or {})
        self.events: dict[str, dict[str, Any]] = copy.deepcopy(events or {})
        for room in self.rooms.values():
            room.setdefault("equipment", [])
        for event_id, event in self.events.items():
            self._check_record(event_id, event)
        # Derived: the next event number, and each person's busy times (event id -> [date, start, end]).
        self._next_number = 1 + max((int(e.removeprefix("EV-")) for e in self.events), default=1000)
        self._busy: dict[str, dict[str, list[str]]] = {handle: {} for handle in self.people}
        for event_id in self.events:
            self._index(event_id)

    def _check_record(self, event_id: str, event: dict[str, Any]) -> None:
        """Fill an event's optional fields and refuse one that points at nothing (a config error)."""
        if not _EVENT_ID.match(event_id):
            raise ValueError(f"event id {event_id!r} is not of the form EV-1234")
        event.setdefault("kind", "meeting")
        event.setdefault("room", None)
        event.setdefault("attendees", {})
        event.setdefault("status", "confirmed")
        event.setdefault("notes", "")
        if event["organizer"] not in self.people:
            raise ValueError(f"{event_id}: organizer {event['organizer']!r} is not in the directory")
        if event["room"] is not None and event["room"] not in self.rooms:
            raise ValueError(f"{event_id}: room {event['room']!r} does not exist")
        for handle, rsvp in event["attendees"].items():
            if handle not in self.people:
                raise ValueError(f"{event_id}: attendee {handle!r} is not in the directory")
            if rsvp not in RSVP_STATES:
                raise ValueError(f"{event_id}: {handle} has the answer {rsvp!r}, not one of {RSVP_STATES}")
        _day(event["date"], f"{event_id}'s date")
        if _minutes(event["start"]) >= _minutes(event["end"]):
            raise ValueError(f"{event_id} ends before it starts")

    # -- helpers ------------------------------------------------------------------------------------------

    def _index(self, event_id: str) -> None:
        """Bring everyone's busy times up to date with one event."""
        for times in self._busy.values():
            times.pop(event_id, None)
        event = self.events[event_id]
        if event["status"] == "cancelled":
            return
        for handle in self._going(event):
            self._busy[handle][event_id] = [event["date"], event["start"], event["end"]]

    @staticmethod
    def _going(event: dict[str, Any]) -> list[str]:
        """The organizer and every invitee who has not declined."""
        return [event["organizer"], *(h for h, rsvp in event["attendees"].items() if rsvp != "declined")]

    def _person(self, ref: str, what: str = "person") -> str:
        """The handle of a person given by handle or e-mail address."""
        key = ref.strip().lower() if isinstance(ref, str) else ""
        if key in self.people:
            return key
        for handle, person in self.people.items():
            if person.get("email", "").lower() == key:
                return handle
        raise ValueError(f"{what} {ref!r} is not in the directory (use a handle such as 'amara.okafor'; "
                         "find_person looks people up by name)")

    def _event(self, event_id: str) -> tuple[str, dict[str, Any]]:
        """(id, record) of an event given by its id, in any case."""
        key = event_id.strip().upper() if isinstance(event_id, str) else ""
        if key not in self.events:
            raise ValueError(f"there is no event {event_id!r} on the calendar")
        return key, self.events[key]

    def _room(self, name: str) -> str:
        for room in self.rooms:
            if isinstance(name, str) and room.lower() == name.strip().lower():
                return room
        raise ValueError(f"there is no room called {name!r}; the rooms are {', '.join(sorted(self.rooms))}")

    def _upcoming(self, event_id: str, event: dict[str, Any], doing: str) -> None:
        """Refuse to change an event that is cancelled or already over."""
        if event["status"] == "cancelled":
            raise ValueError(f"{event_id} ({event['title']}) is cancelled, so you cannot {doing}")
        if event["date"] < self.today:
            raise ValueError(f"{event_id} ({event['title']}) took place on {event['date']}, so you cannot {doing}")

    def _slot(self, date: str, start: str, end: str) -> tuple[str, int, int]:
        """A (date, start, end) slot checked and normalized: a real day, not in the past, start before end."""
        day = _day(date).isoformat()
        begin, finish = _minutes(start, "start"), _minutes(end, "end")
        if begin >= finish:
            raise ValueError(f"the end ({end}) must come after the start ({start})")
        if day < self.today:
            raise ValueError(f"{day} is in the past (today is {self.today})")
        return day, begin, finish

    def _room_taken_by(self, room: str, day: str, begin: int, finish: int, ignore: str = "") -> str | None:
        """The id of a live event holding a room at some point of a slot, or None."""
        for event_id, event in sorted(self.events.items()):
            if (event_id != ignore and event["room"] == room and event["status"] != "cancelled"
                    and event["date"] == day and _minutes(event["start"]) < finish
                    and begin < _minutes(event["end"])):
                return event_id
        return None

    def _book_room(self, room: str, day: str, begin: int, finish: int, headcount: int, ignore: str = "") -> None:
        """Refuse a room that is taken during the slot or too small for the headcount."""
        taken = self._room_taken_by(room, day, begin, finish, ignore)
        if taken:
            other = self.events[taken]
            raise ValueError(f"{room} is already booked {other['start']}-{other['end']} on {day} for {taken} "
                             f"({other['title']}); find_available_rooms lists free rooms")
        if headcount > self.rooms[room]["capacity"]:
            raise ValueError(f"{room} seats {self.rooms[room]['capacity']}, but {headcount} people would be "
                             "in the meeting; pick a bigger room")

    def _clashes(self, handles: list[str], day: str, begin: int, finish: int, ignore: str = "") -> list[dict]:
        """Who of `handles` is already busy during a slot, and with what."""
        found = []
        for handle in handles:
            for event_id, (when, start, end) in sorted(self._busy.get(handle, {}).items()):
                if event_id != ignore and when == day and _minutes(start) < finish and begin < _minutes(end):
                    found.append({"person": handle, "event_id": event_id, "title": self.events[event_id]["title"],
                                  "start": start, "end": end})
        return found

    def _view(self, event_id: str) -> dict[str, Any]:
        """An event as the tools show it: its fields, weekday, names and a count of the answers."""
        event = self.events[event_id]
        tally = {state: 0 for state in RSVP_STATES}
        for rsvp in event["attendees"].values():
            tally[rsvp] += 1
        view = {
            "event_id": event_id,
            "title": event["title"],
            "kind": event["kind"],
            "date": event["date"],
            "weekday": Date.fromisoformat(event["date"]).strftime("%A"),
            "start": event["start"],
            "end": event["end"],
            "room": event["room"],
            "organizer": event["organizer"],
            "organizer_name": self.people[event["organizer"]]["name"],
            "attendees": [{"person": h, "name": self.people[h]["name"], "response": rsvp}
                          for h, rsvp in sorted(event["attendees"].items())],
            "answers": tally,
            "status": event["status"],
            "notes": event["notes"],
        }
        if "cancel_reason" in event:
            view["cancel_reason"] = event["cancel_reason"]
        return view

    # -- reading ------------------------------------------------------------------------------------------

    @tool("read")
    def get_today(self) -> dict:
        """Tell me today's date and the office's time zone.

        Returns:
            Today's date and weekday, the time zone every event time is written in, and the working hours.
        """
        return {"today": self.today, "weekday": Date.fromisoformat(self.today).strftime("%A"),
                "time_zone": self.time_zone, "working_hours": {"start": WORKDAY_START, "end": WORKDAY_END}}

    @tool("read")
    def find_person(self, query: str) -> list[dict]:
        """Look up colleagues by name, handle, e-mail or team.

        Args:
            query: Part of a person's name (e.g. "Okafor"), their handle, their e-mail address or their team's
                name (e.g. "Platform"); case and accents do not matter.

        Returns:
            Everyone who matches, by handle, with name, e-mail, team, job title and time zone.
        """
        wanted = _fold(query.strip()) if isinstance(query, str) else ""
        if not wanted:
            raise ValueError("query is empty: give part of a name, a handle or a team")
        return [{"handle": handle, **person} for handle, person in sorted(self.people.items())
                if any(wanted in _fold(str(person.get(field, ""))) for field in ("name", "email", "team"))
                or wanted in handle]

    @tool("read")
    def list_events(self, person: str | None = None, start_date: str | None = None, end_date: str | None = None,
                    room: str | None = None, response: str | None = None,
                    include_cancelled: bool = False) -> list[dict]:
        """Show what is on the calendar, soonest first.

        Args:
            person: Only events this person organizes or is invited to (their handle, e.g. "amara.okafor").
            start_date: The first day to show, YYYY-MM-DD; today if left out.
            end_date: The last day to show, YYYY-MM-DD (inclusive); no limit if left out.
            room: Only events booked in this room.
            response: Only events where `person` has given this answer: "needs_action" (not answered yet),
                "accepted", "tentative" or "declined". Needs `person`.
            include_cancelled: Also show cancelled events.

        Returns:
            One line per event: id, title, kind, day, times, room, organizer and status, plus the person's own
            answer ("organizer" for their own events) when `person` is given.
        """
        who = self._person(person) if person is not None else None
        first = _day(start_date, "start_date").isoformat() if start_date is not None else self.today
        last = _day(end_date, "end_date").isoformat() if end_date is not None else None
        if last is not None and last < first:
            raise ValueError(f"end_date {last} comes before start_date {first}")
        where = self._room(room) if room is not None else None
        if response is not None:
            if response not in RSVP_STATES:
                raise ValueError(f"response must be one of {', '.join(RSVP_STATES)}, not {response!r}")
            if who is None:
                raise ValueError("response filters one person's answers: give person too")
        found = []
        for event_id, event in self.events.items():
            if not include_cancelled and event["status"] == "cancelled":
                continue
            if event["date"] < first or (last is not None and event["date"] > last):
                continue
            if where is not None and event["room"] != where:
                continue
            mine = None
            if who is not None:
                mine = "organizer" if event["organizer"] == who else event["attendees"].get(who)
                if mine is None or (response is not None and mine != response):
                    continue
            line = {"event_id": event_id, "title": event["title"], "kind": event["kind"], "date": event["date"],
                    "weekday": Date.fromisoformat(event["date"]).strftime("%A"), "start": event["start"],
                    "end": event["end"], "room": event["room"], "organizer": event["organizer"],
                    "status": event["status"]}
            if who is not None:
                line["your_response"] = mine
            found.append(line)
        return sorted(found, key=lambda e: (e["date"], e["start"], e["event_id"]))

    @tool("read")
    def get_event(self, event_id: str) -> dict:
        """Show an event in full: when and where, who organizes it and who has answered what.

        Args:
            event_id: The event's id, e.g. "EV-3307".

        Returns:
            The event's fields, each invitee with their answer, and how many gave each answer.
        """
        return self._view(self._event(event_id)[0])

    @tool("read")
    def find_free_slots(self, people: list[str], date: str, duration_minutes: int = 30) -> dict:
        """Find times on a day when everyone listed is free.

        Args:
            people: Handles of everyone who has to be there.
            date: The day to search, YYYY-MM-DD.
            duration_minutes: How long the meeting needs to be, in minutes.

        Returns:
            The day and the free stretches within working hours (09:00-18:00) at least that long. An event
            someone has declined does not keep them busy; one they have not answered yet does.
        """
        if not people:
            raise ValueError("people is empty: say whose calendars to compare")
        handles = sorted({self._person(p) for p in people})
        day = _day(date).isoformat()
        open_from, open_until = _minutes(WORKDAY_START), _minutes(WORKDAY_END)
        if not 0 < duration_minutes <= open_until - open_from:
            raise ValueError(f"duration_minutes must be between 1 and {open_until - open_from}, "
                             f"not {duration_minutes}")
        busy = sorted((_minutes(start), _minutes(end)) for handle in handles
                      for when, start, end in self._busy[handle].values() if when == day)
        free, cursor = [], open_from
        for begin, finish in busy + [(open_until, open_until)]:
            if min(begin, open_until) - cursor >= duration_minutes:
                free.append({"start": _clock(cursor), "end": _clock(min(begin, open_until))})
            cursor = max(cursor, finish)
        return {"date": day, "weekday": Date.fromisoformat(day).strftime("%A"), "free": free}

    @tool("read")
    def find_available_rooms(self, date: str, start: str, end: str, min_capacity: int = 1,
                             equipment: str | None = None) -> list[dict]:
        """Find meeting rooms that are free for a time slot.

        Args:
            date: The day, YYYY-MM-DD.
            start: When the slot starts, HH:MM (24-hour).
            end: When the slot ends, HH:MM (24-hour).
            min_capacity: How many people the room has to seat.
            equipment: Something the room must have: "video" (a video-call screen), "projector" or "whiteboard".

        Returns:
            The free rooms that fit, smallest first, with capacity, floor and equipment.
        """
        day, begin, finish = self._slot(date, start, end)
        if min_capacity < 1:
            raise ValueError(f"min_capacity must be at least 1, not {min_capacity}")
        if equipment is not None and equipment not in EQUIPMENT:
            raise ValueError(f"rooms are equipped with {', '.join(EQUIPMENT)}; there is no {equipment!r}")
        return [{"room": name, **room} for name, room in sorted(self.rooms.items(),
                                                                key=lambda r: (r[1]["capacity"], r[0]))
                if room["capacity"] >= min_capacity and (equipment is None or equipment in room["equipment"])
                and self._room_taken_by(name, day, begin, finish) is None]

    # -- writing ------------------------------------------------------------------------------------------

    @tool("write")
    def schedule_event(self, title: str, organizer: str, date: str, start: str, end: str,
                       attendees: list[str] | None = None, room: str | None = None, kind: EventKind = "meeting",
                       notes: str = "") -> dict:
        """Put a new event on the calendar and send out the invitations.

        Args:
            title: What the event is called, as invitees will see it.
            organizer: Handle of the person the event is for; they attend it and need no invitation.
            date: The day, YYYY-MM-DD (today or later).
            start: Start time, HH:MM (24-hour).
            end: End time, HH:MM (24-hour).
            attendees: Handles of the people to invite; each gets an invitation to answer.
            room: The room to book, if any; it must be free and big enough for everyone invited.
            kind: What sort of event it is.
            notes: A description or agenda for the invitation.

        Returns:
            The new event (with its id), and any clashes with what the people invited already have on.
        """
        if not isinstance(title, str) or not title.strip():
            raise ValueError("title is empty: give the event a name")
        if kind not in EVENT_KINDS:
            raise ValueError(f"kind must be one of {', '.join(EVENT_KINDS)}, not {kind!r}")
        host = self._person(organizer, "organizer")
        guests: list[str] = []
        for ref in attendees or []:
            handle = self._person(ref, "attendee")
            if handle != host and handle not in guests:
                guests.append(handle)
        day, begin, finish = self._slot(date, start, end)
        where = self._room(room) if room is not None else None
        if where is not None:
            self._book_room(where, day, begin, finish, 1 + len(guests))
        event_id = f"EV-{self._next_number}"
        self._next_number += 1
        self.events[event_id] = {
            "title": title.strip(), "kind": kind, "organizer": host, "date": day, "start": _clock(begin),
            "end": _clock(finish), "room": where, "attendees": {h: "needs_action" for h in sorted(guests)},
            "status": "confirmed", "notes": notes,
        }
        clashes = self._clashes([host, *sorted(guests)], day, begin, finish)
        self._index(event_id)
        return {**self._view(event_id), "clashes": clashes}

    @tool("write")
    def invite_people(self, event_id: str, people: list[str]) -> dict:
        """Invite more people to an event that is already on the calendar.

        Args:
            event_id: The event's id, e.g. "EV-3307".
            people: Handles of the people to invite.

        Returns:
            Who was invited, who was on the list already, and any clashes the new invitees have then.
        """
        event_id, event = self._event(event_id)
        self._upcoming(event_id, event, "invite anyone to it")
        if not people:
            raise ValueError("people is empty: say whom to invite")
        new, already = [], []
        for ref in people:
            handle = self._person(ref)
            if handle == event["organizer"] or handle in event["attendees"]:
                already.append(handle)
            elif handle not in new:
                new.append(handle)
        if event["room"] is not None and new:
            headcount = len(self._going(event)) + len(new)
            if headcount > self.rooms[event["room"]]["capacity"]:
                raise ValueError(f"{event['room']} seats {self.rooms[event['room']]['capacity']}, and inviting "
                                 f"{len(new)} more would make {headcount}; move the event to a bigger room first")
        for handle in sorted(new):
            event["attendees"][handle] = "needs_action"
        self._index(event_id)
        day, begin, finish = event["date"], _minutes(event["start"]), _minutes(event["end"])
        return {"event_id": event_id, "invited": sorted(new), "already_on_the_list": sorted(set(already)),
                "clashes": self._clashes(sorted(new), day, begin, finish, ignore=event_id)}

    @tool("write")
    def respond_to_invite(self, event_id: str, person: str, response: str) -> dict:
        """Answer an invitation on someone's behalf: accept it, decline it or say maybe.

        Args:
            event_id: The event's id, e.g. "EV-3307".
            person: Handle of the invitee who is answering.
            response: Their answer.

        Returns:
            The event, the person, their answer now and what it was before.
        """
        if response not in RESPONSES:
            raise ValueError(f"response must be 'accepted', 'tentative' or 'declined', not {response!r}")
        event_id, event = self._event(event_id)
        handle = self._person(person)
        self._upcoming(event_id, event, "answer its invitation")
        if handle == event["organizer"]:
            raise ValueError(f"{handle} organizes {event_id}; organizers do not answer their own invitations")
        if handle not in event["attendees"]:
            raise ValueError(f"{handle} is not invited to {event_id} ({event['title']}); invite_people adds them")
        before = event["attendees"][handle]
        event["attendees"][handle] = response
        self._index(event_id)
        return {"event_id": event_id, "title": event["title"], "person": handle, "response": response,
                "previous_response": before}

    @tool("write")
    def move_event(self, event_id: str, date: str | None = None, start: str | None = None, end: str | None = None,
                   room: str | None = None) -> dict:
        """Move an event to another day, time or room.

        A new day or time asks every invitee to answer again; a new room alone does not.

        Args:
            event_id: The event's id, e.g. "EV-3307".
            date: The new day, YYYY-MM-DD; the same day if left out.
            start: The new start time, HH:MM; the same start if left out.
            end: The new end time, HH:MM; if left out, the event keeps its length.
            room: The room to move it to; it stays in its room if left out.

        Returns:
            The event as it is now.
        """
        event_id, event = self._event(event_id)
        self._upcoming(event_id, event, "move it")
        if date is None and start is None and end is None and room is None:
            raise ValueError("say where to move the event: a new date, start, end or room")
        old_begin, old_end = _minutes(event["start"]), _minutes(event["end"])
        begin = _minutes(start, "start") if start is not None else old_begin
        finish = _minutes(end, "end") if end is not None else begin + (old_end - old_begin)
        if finish > 24 * 60:
            raise ValueError("the event would run past midnight; give an end time")
        day, begin, finish = self._slot(date if date is not None else event["date"], _clock(begin), _clock(finish))
        where = self._room(room) if room is not None else event["room"]
        retimed = (day, begin, finish) != (event["date"], old_begin, old_end)
        if not retimed and where == event["room"]:
            raise ValueError(f"{event_id} is already on {day} {_clock(begin)}-{_clock(finish)}"
                             + (f" in {where}" if where else ""))
        if where is not None:
            self._book_room(where, day, begin, finish, len(self._going(event)), ignore=event_id)
        event.update(date=day, start=_clock(begin), end=_clock(finish), room=where)
        if retimed:
            for handle in event["attendees"]:
                event["attendees"][handle] = "needs_action"
        self._index(event_id)
        return self._view(event_id)

    @tool("write")
    def remove_attendee(self, event_id: str, person: str) -> dict:
        """Take someone off an event's guest list.

        Args:
            event_id: The event's id, e.g. "EV-3307".
            person: Handle of the invitee to take off.

        Returns:
            The event as it is now.
        """
        event_id, event = self._event(event_id)
        handle = self._person(person)
        self._upcoming(event_id, event, "change its guest list")
        if handle == event["organizer"]:
            raise ValueError(f"{handle} organizes {event_id}; cancel the event or ask them to hand it over")
        if handle not in event["attendees"]:
            raise ValueError(f"{handle} is not on the guest list of {event_id} ({event['title']})")
        del event["attendees"][handle]
        self._index(event_id)
        return self._view(event_id)

    @tool("write")
    def cancel_event(self, event_id: str, reason: str = "") -> dict:
        """Call off an event and let everyone invited know.

        Args:
            event_id: The event's id, e.g. "EV-3307".
            reason: A line for the cancellation notice, if the organizer gave one.

        Returns:
            The event's id and title, its status now, and who was told.
        """
        event_id, event = self._event(event_id)
        self._upcoming(event_id, event, "cancel it")
        event["status"] = "cancelled"
        event["cancel_reason"] = reason
        self._index(event_id)
        return {"event_id": event_id, "title": event["title"], "status": "cancelled",
                "notified": sorted(h for h, rsvp in event["attendees"].items() if rsvp != "declined")}
