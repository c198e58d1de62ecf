"""The front desk of a small outpatient clinic as a rods environment (docs/guides/environments.md).

Patients, doctors and appointments, as the clinic's scheduling system keeps them. The public
attributes are the state; the constructor takes that state as keyword arguments and derives the
appointments of each patient and the next free patient and appointment numbers from it.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from datetime import date as Date
from types import MappingProxyType
from typing import Literal, get_args

from rods.envs import tool

VisitType = Literal["new-patient", "follow-up", "annual-physical", "procedure", "telehealth"]
Status = Literal["booked", "checked-in", "completed", "cancelled", "no-show"]
VISIT_TYPES = get_args(VisitType)

#: Half-hour start times: mornings 08:00-12:00, afternoons 13:00-17:00 (lunch is closed).
SLOTS = tuple(f"{h:02d}:{m:02d}" for h in (8, 9, 10, 11, 13, 14, 15, 16) for m in (0, 30))
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
#: What a patient pays at check-in, by insurance plan.
COPAYS = MappingProxyType({
    "Aetna Choice": 30.0, "BlueCross PPO": 25.0, "UnitedHealth HMO": 20.0,
    "Medicare": 0.0, "Medicaid": 0.0, "self-pay": 120.0,
})
CANCEL_REASONS = ("patient request", "doctor unavailable", "clinic closure", "booked in error")
PAYMENT_METHODS = ("card", "cash", "check")
LATE_CANCEL_FEE = 25.0
ADULT_AGE = 18
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _fold(text: str) -> list[str]:
    """The words of a name, lower-case, accents and apostrophes dropped ("O'Connell" -> "oconnell")."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", plain.replace("'", ""))


def _digits(phone: str) -> str:
    return re.sub(r"\D", "", phone)


class Clinic:
    """A clinic's patients, doctors and appointment book, seen from the front desk."""

    def __init__(self, today: str = "2026-03-09", doctors: dict[str, dict] | None = None,
                 patients: dict[str, dict] | None = None, appointments: dict[str, dict] | None = None) -> None:
        self._parse_date(today, "today")
        self.today = today
        # doctor id ("D-03") -> {"name", "specialty", "working_days" (["Mon", ...]), "accepting_new_patients"}
        self.doctors: dict[str, dict] = copy.deepcopy(doctors or {})
        # patient id ("P-0107") -> {"name", "date_of_birth", "phone", "insurance_plan", "balance"}
        self.patients: dict[str, dict] = copy.deepcopy(patients or {})
        # appointment id ("AP-1042") -> {"patient_id", "doctor_id", "date", "slot", "visit_type", "status"}
        # (plus "cancel_reason" once cancelled)
        self.appointments: dict[str, dict] = copy.deepcopy(appointments or {})
        self._by_patient: dict[str, list[str]] = {pid: [] for pid in self.patients}
        for aid, appt in sorted(self.appointments.items()):
            self._by_patient.setdefault(appt["patient_id"], []).append(aid)
        self._next_patient = 1 + max((int(p.split("-")[1]) for p in self.patients), default=100)
        self._next_appointment = 1 + max((int(a.split("-")[1]) for a in self.appointments), default=1000)

    # -- reading -------------------------------------------------------------------------------------------

    @tool("read")
    def get_today(self) -> dict:
        """Tell today's date at the clinic and its opening hours.

        Returns the date (YYYY-MM-DD), the weekday, and the half-hour slots the clinic books.
        """
        day = self._parse_date(self.today, "today")
        return {"today": self.today, "weekday": WEEKDAY_NAMES[day.weekday()], "slots": list(SLOTS)}

    @tool("read")
    def find_patient(self, name: str | None = None, date_of_birth: str | None = None,
                     phone: str | None = None) -> list[dict]:
        """Look up a patient by name, date of birth or phone number.

        Give at least one; all that are given must match. Returns every matching patient's record
        (id, name, date of birth, phone, insurance plan and the balance they owe), possibly none.

        Args:
            name: The patient's name or part of it, such as 'Rahman' or 'Margaret O'; case and accents do not matter.
            date_of_birth: Their date of birth as YYYY-MM-DD.
            phone: Their phone number or its last digits (at least 4), in any format.
        """
        if not any((name, date_of_birth, phone)):
            raise ValueError("Give a name, a date of birth or a phone number to search by.")
        words = _fold(name or "")
        digits = _digits(phone or "")
        if phone and len(digits) < 4:
            raise ValueError(f"Phone {phone!r}: give at least the last 4 digits.")
        found = []
        for pid, patient in sorted(self.patients.items()):
            names = _fold(patient["name"])
            if words and not all(any(n.startswith(w) for n in names) for w in words):
                continue
            if date_of_birth and patient["date_of_birth"] != date_of_birth:
                continue
            if digits and not _digits(patient["phone"]).endswith(digits):
                continue
            found.append(self._patient_record(pid))
        return found

    @tool("read")
    def list_doctors(self, specialty: str | None = None) -> list[dict]:
        """List the clinic's doctors, optionally only those of one specialty.

        Returns each doctor's id, name, specialty, working days and whether they take new patients.

        Args:
            specialty: Only doctors of this specialty, such as 'dermatology'.
        """
        specialties = sorted({d["specialty"] for d in self.doctors.values()})
        if specialty is not None and specialty.strip().lower() not in specialties:
            raise ValueError(f"No doctor here practices {specialty!r}; specialties: {', '.join(specialties)}.")
        return [{"doctor_id": did, **copy.deepcopy(d)} for did, d in sorted(self.doctors.items())
                if specialty is None or d["specialty"] == specialty.strip().lower()]

    @tool("read")
    def find_open_slots(self, doctor_id: str, date: str) -> dict:
        """Show when a doctor is free on a given day.

        Args:
            doctor_id: The doctor's id, such as 'D-03'.
            date: The day as YYYY-MM-DD, today or later.
        """
        doctor = self._doctor(doctor_id)
        day = self._bookable_day(doctor_id, date)
        taken = {a["slot"] for a in self._active() if a["doctor_id"] == doctor_id and a["date"] == date}
        return {"doctor_id": doctor_id, "doctor": doctor["name"], "date": date,
                "weekday": WEEKDAY_NAMES[day.weekday()], "open_slots": [s for s in SLOTS if s not in taken]}

    @tool("read")
    def list_appointments(self, patient_id: str | None = None, doctor_id: str | None = None,
                          date: str | None = None, status: Status | None = None) -> list[dict]:
        """List appointments, by patient, doctor, day or status.

        The filters given combine; with none, every appointment on the books. Sorted by date and time.

        Args:
            patient_id: Only this patient's appointments, such as 'P-0107'.
            doctor_id: Only this doctor's appointments, such as 'D-03'.
            date: Only appointments on this day, as YYYY-MM-DD.
            status: Only appointments in this status.
        """
        if patient_id is not None:
            self._patient(patient_id)
            ids = self._by_patient.get(patient_id, [])
        else:
            ids = list(self.appointments)
        if doctor_id is not None:
            self._doctor(doctor_id)
        if date is not None:
            self._parse_date(date, "date")
        rows = [self._appointment_record(aid) for aid in ids
                if (doctor_id is None or self.appointments[aid]["doctor_id"] == doctor_id)
                and (date is None or self.appointments[aid]["date"] == date)
                and (status is None or self.appointments[aid]["status"] == status)]
        return sorted(rows, key=lambda r: (r["date"], r["slot"], r["appointment_id"]))

    # -- patients ------------------------------------------------------------------------------------------

    @tool("write")
    def register_patient(self, name: str, date_of_birth: str, phone: str, insurance_plan: str = "self-pay") -> dict:
        """Register a new patient with the clinic.

        Args:
            name: Full name, first name first.
            date_of_birth: Date of birth as YYYY-MM-DD.
            phone: A 10-digit phone number, in any format ('555-771-3020', '(555) 771 3020').
            insurance_plan: 'Aetna Choice', 'BlueCross PPO', 'UnitedHealth HMO', 'Medicare', 'Medicaid' or 'self-pay'.
        """
        name = " ".join(name.split())
        if not name:
            raise ValueError("A patient needs a name.")
        born = self._parse_date(date_of_birth, "date_of_birth")
        if born > self._parse_date(self.today, "today"):
            raise ValueError(f"Date of birth {date_of_birth} is after today ({self.today}).")
        self._check_plan(insurance_plan)
        for pid, patient in sorted(self.patients.items()):
            if _fold(patient["name"]) == _fold(name) and patient["date_of_birth"] == date_of_birth:
                raise ValueError(f"{patient['name']}, born {date_of_birth}, is already registered as {pid}.")
        pid = f"P-{self._next_patient:04d}"
        self._next_patient += 1
        self.patients[pid] = {"name": name, "date_of_birth": date_of_birth, "phone": self._phone(phone),
                              "insurance_plan": insurance_plan, "balance": 0.0}
        self._by_patient[pid] = []
        return self._patient_record(pid)

    @tool("write")
    def update_patient(self, patient_id: str, phone: str | None = None, insurance_plan: str | None = None) -> dict:
        """Change a patient's phone number or insurance plan.

        Args:
            patient_id: The patient's id, such as 'P-0107'.
            phone: The new 10-digit phone number, in any format.
            insurance_plan: 'Aetna Choice', 'BlueCross PPO', 'UnitedHealth HMO', 'Medicare', 'Medicaid' or 'self-pay'.
        """
        patient = self._patient(patient_id)
        if phone is None and insurance_plan is None:
            raise ValueError("Nothing to change: give a new phone number or insurance plan.")
        new_phone = self._phone(phone) if phone is not None else patient["phone"]
        if insurance_plan is not None:
            self._check_plan(insurance_plan)
            patient["insurance_plan"] = insurance_plan
        patient["phone"] = new_phone
        return self._patient_record(patient_id)

    # -- the appointment book ------------------------------------------------------------------------------

    @tool("write")
    def book_appointment(self, patient_id: str, doctor_id: str, date: str, slot: str, visit_type: VisitType) -> dict:
        """Book an appointment for a patient with a doctor.

        Args:
            patient_id: The patient's id, such as 'P-0107'.
            doctor_id: The doctor's id, such as 'D-03'.
            date: The day of the visit as YYYY-MM-DD, today or later, on one of the doctor's working days.
            slot: The start time as HH:MM, on the half hour, such as '09:30'.
            visit_type: What the visit is for; 'new-patient' only with a doctor who takes new patients.
        """
        self._patient(patient_id)
        self._check_visit(patient_id, doctor_id, date, slot, visit_type)
        aid = f"AP-{self._next_appointment}"
        self._next_appointment += 1
        self.appointments[aid] = {"patient_id": patient_id, "doctor_id": doctor_id, "date": date, "slot": slot,
                                  "visit_type": visit_type, "status": "booked"}
        self._by_patient.setdefault(patient_id, []).append(aid)
        return self._appointment_record(aid)

    @tool("write")
    def reschedule_appointment(self, appointment_id: str, date: str, slot: str, doctor_id: str | None = None) -> dict:
        """Move a booked appointment to another day or time, or to another doctor.

        The appointment keeps its id and visit type.

        Args:
            appointment_id: The appointment's id, such as 'AP-1042'.
            date: The new day as YYYY-MM-DD.
            slot: The new start time as HH:MM, such as '14:00'.
            doctor_id: The doctor to see instead; leave out to keep the same doctor.
        """
        appt = self._appointment(appointment_id)
        if appt["status"] != "booked":
            raise ValueError(f"{appointment_id} is {appt['status']}; only a booked appointment can be moved.")
        doctor_id = doctor_id or appt["doctor_id"]
        if (doctor_id, date, slot) == (appt["doctor_id"], appt["date"], appt["slot"]):
            raise ValueError(f"{appointment_id} is already at {slot} on {date} with {doctor_id}.")
        self._check_visit(appt["patient_id"], doctor_id, date, slot, appt["visit_type"], moving=appointment_id)
        appt.update(doctor_id=doctor_id, date=date, slot=slot)
        return self._appointment_record(appointment_id)

    @tool("write")
    def cancel_appointment(self, appointment_id: str, reason: str) -> dict:
        """Cancel a booked appointment.

        A cancellation at the patient's request on the day of the visit adds the $25 late-cancellation fee
        to their balance.

        Args:
            appointment_id: The appointment's id, such as 'AP-1042'.
            reason: Why: 'patient request', 'doctor unavailable', 'clinic closure' or 'booked in error'.
        """
        appt = self._appointment(appointment_id)
        if reason not in CANCEL_REASONS:
            raise ValueError(f"Reason {reason!r} is not one of: {', '.join(CANCEL_REASONS)}.")
        if appt["status"] != "booked":
            raise ValueError(f"{appointment_id} is already {appt['status']}.")
        fee = LATE_CANCEL_FEE if reason == "patient request" and appt["date"] == self.today else 0.0
        appt["status"] = "cancelled"
        appt["cancel_reason"] = reason
        patient = self.patients[appt["patient_id"]]
        patient["balance"] = round(patient["balance"] + fee, 2)
        return {**self._appointment_record(appointment_id), "late_cancellation_fee": fee,
                "patient_balance": patient["balance"]}

    @tool("write")
    def check_in_patient(self, appointment_id: str) -> dict:
        """Check a patient in for today's appointment and charge the copay of their plan.

        Args:
            appointment_id: Today's appointment, such as 'AP-1042'.
        """
        appt = self._appointment(appointment_id)
        if appt["date"] != self.today:
            raise ValueError(f"{appointment_id} is on {appt['date']}, not today ({self.today}).")
        if appt["status"] != "booked":
            raise ValueError(f"{appointment_id} is {appt['status']}; only a booked appointment can be checked in.")
        patient = self.patients[appt["patient_id"]]
        copay = COPAYS[patient["insurance_plan"]]
        appt["status"] = "checked-in"
        patient["balance"] = round(patient["balance"] + copay, 2)
        return {**self._appointment_record(appointment_id), "copay": copay, "patient_balance": patient["balance"]}

    @tool("write")
    def record_payment(self, patient_id: str, amount: float, method: str) -> dict:
        """Take a payment from a patient toward what they owe.

        Args:
            patient_id: The patient's id, such as 'P-0107'.
            amount: Dollars paid, no more than their balance.
            method: How they paid.
        """
        patient = self._patient(patient_id)
        if method not in PAYMENT_METHODS:
            raise ValueError(f"Payment method {method!r} is not accepted; use {', '.join(PAYMENT_METHODS)}.")
        amount = round(float(amount), 2)
        if amount <= 0:
            raise ValueError(f"Amount {amount} must be more than zero.")
        if amount > patient["balance"]:
            raise ValueError(f"{patient['name']} owes {patient['balance']:.2f}; {amount:.2f} is more than that.")
        patient["balance"] = round(patient["balance"] - amount, 2)
        return {"patient_id": patient_id, "name": patient["name"], "paid": amount, "method": method,
                "balance": patient["balance"]}

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
    def _phone(phone: str) -> str:
        digits = _digits(phone)
        if len(digits) == 11 and digits.startswith("1"):
            digits = digits[1:]
        if len(digits) != 10:
            raise ValueError(f"Phone {phone!r} needs 10 digits, area code first.")
        return f"{digits[:3]}-{digits[3:6]}-{digits[6:]}"

    @staticmethod
    def _check_plan(plan: str) -> None:
        if plan not in COPAYS:
            raise ValueError(f"Insurance plan {plan!r} is not one we take: {', '.join(COPAYS)}.")

    def _patient(self, patient_id: str) -> dict:
        if patient_id not in self.patients:
            raise ValueError(f"No patient with id {patient_id!r}.")
        return self.patients[patient_id]

    def _doctor(self, doctor_id: str) -> dict:
        if doctor_id not in self.doctors:
            raise ValueError(f"No doctor with id {doctor_id!r}.")
        return self.doctors[doctor_id]

    def _appointment(self, appointment_id: str) -> dict:
        if appointment_id not in self.appointments:
            raise ValueError(f"No appointment with id {appointment_id!r}.")
        return self.appointments[appointment_id]

    def _active(self) -> list[dict]:
        """Appointments that hold their slot (booked or checked in)."""
        return [a for a in self.appointments.values() if a["status"] in ("booked", "checked-in")]

    def _bookable_day(self, doctor_id: str, date: str) -> Date:
        """The day, if the doctor sees patients then and it is not in the past."""
        day = self._parse_date(date, "date")
        if date < self.today:
            raise ValueError(f"{date} is in the past (today is {self.today}).")
        doctor = self.doctors[doctor_id]
        if WEEKDAYS[day.weekday()] not in doctor["working_days"]:
            raise ValueError(f"{doctor['name']} does not see patients on {WEEKDAY_NAMES[day.weekday()]}s; "
                             f"working days: {', '.join(doctor['working_days'])}.")
        return day

    def _check_visit(self, patient_id: str, doctor_id: str, date: str, slot: str, visit_type: str,
                     moving: str | None = None) -> None:
        """Refuse a visit the clinic's rules do not allow (`moving`: the appointment being moved)."""
        doctor = self._doctor(doctor_id)
        day = self._bookable_day(doctor_id, date)
        if slot not in SLOTS:
            raise ValueError(f"Slot {slot!r} is not a start time we book; slots run on the half hour "
                             f"{SLOTS[0]}-{SLOTS[7]} and {SLOTS[8]}-{SLOTS[-1]}.")
        if visit_type not in VISIT_TYPES:
            raise ValueError(f"Visit type {visit_type!r} is not one of: {', '.join(VISIT_TYPES)}.")
        if visit_type == "new-patient" and not doctor["accepting_new_patients"]:
            raise ValueError(f"{doctor['name']} is not taking new patients.")
        patient = self.patients[patient_id]
        born = self._parse_date(patient["date_of_birth"], "date_of_birth")
        age = day.year - born.year - ((day.month, day.day) < (born.month, born.day))
        if doctor["specialty"] == "pediatrics" and age >= ADULT_AGE:
            raise ValueError(f"{doctor['name']} sees children only; {patient['name']} is {age}.")
        for aid, other in sorted(self.appointments.items()):
            if aid == moving or other["status"] not in ("booked", "checked-in"):
                continue
            if other["date"] == date and other["slot"] == slot:
                if other["doctor_id"] == doctor_id:
                    raise ValueError(f"{doctor['name']} is taken at {slot} on {date} ({aid}).")
                if other["patient_id"] == patient_id:
                    raise ValueError(f"{patient['name']} already has {aid} at {slot} on {date}.")

    def _patient_record(self, patient_id: str) -> dict:
        return {"patient_id": patient_id, **copy.deepcopy(self.patients[patient_id])}

    def _appointment_record(self, appointment_id: str) -> dict:
        appt = self.appointments[appointment_id]
        return {"appointment_id": appointment_id, **copy.deepcopy(appt),
                "patient": self.patients.get(appt["patient_id"], {}).get("name"),
                "doctor": self.doctors.get(appt["doctor_id"], {}).get("name")}
