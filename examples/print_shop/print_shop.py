"""The counter of a neighbourhood print shop as a rods environment (docs/guides/environments.md).

Customers (walk-in, business and non-profit accounts), print jobs from quote to pick-up, and the
shop's presses. The public attributes are the state; the constructor takes that state as keyword
arguments and derives from it the next free job number and which job each press is running.
`today` is part of the state, so every call gives the same answer.
"""

from __future__ import annotations

import copy
import math
import re
import unicodedata
from datetime import date as Date, timedelta
from types import MappingProxyType
from typing import Literal, get_args

from rods.envs import tool

Product = Literal["business_cards", "flyers", "postcards", "booklets", "posters", "banners"]
Stock = Literal["uncoated_70lb", "matte_100lb", "gloss_100lb", "cardstock_130lb", "linen_100lb",
                "photo_satin", "backlit_film", "vinyl_13oz", "mesh_vinyl"]
JobStatus = Literal["awaiting_proof", "proof_approved", "printing", "ready", "picked_up", "cancelled"]
PaymentMethod = Literal["card", "cash", "check"]
PRODUCTS = get_args(Product)
STOCKS = get_args(Stock)
PAYMENT_METHODS = get_args(PaymentMethod)

#: Per product: price per piece in dollars, smallest order, order step, the stocks it prints on, the kind of
#: press it needs, standard turnaround in days, and whether it can be printed on both sides.
PRODUCT_SPECS = MappingProxyType({
    "business_cards": {"unit_price": 0.09, "min_qty": 250, "step": 250, "kind": "digital", "turnaround": 3,
                       "stocks": ("cardstock_130lb", "linen_100lb"), "two_sided": True},
    "flyers": {"unit_price": 0.22, "min_qty": 50, "step": 50, "kind": "digital", "turnaround": 2,
               "stocks": ("uncoated_70lb", "matte_100lb", "gloss_100lb"), "two_sided": True},
    "postcards": {"unit_price": 0.30, "min_qty": 100, "step": 50, "kind": "digital", "turnaround": 3,
                  "stocks": ("gloss_100lb", "cardstock_130lb"), "two_sided": True},
    "booklets": {"unit_price": 3.40, "min_qty": 10, "step": 1, "kind": "digital", "turnaround": 5,
                 "stocks": ("uncoated_70lb", "matte_100lb", "gloss_100lb"), "two_sided": True},
    "posters": {"unit_price": 18.00, "min_qty": 1, "step": 1, "kind": "wide_format", "turnaround": 2,
                "stocks": ("photo_satin", "backlit_film"), "two_sided": False},
    "banners": {"unit_price": 48.00, "min_qty": 1, "step": 1, "kind": "wide_format", "turnaround": 3,
                "stocks": ("vinyl_13oz", "mesh_vinyl"), "two_sided": True},
})
#: Price factor of each paper or material.
STOCK_FACTORS = MappingProxyType({
    "uncoated_70lb": 1.0, "matte_100lb": 1.1, "gloss_100lb": 1.1, "cardstock_130lb": 1.25, "linen_100lb": 1.4,
    "photo_satin": 1.0, "backlit_film": 1.6, "vinyl_13oz": 1.0, "mesh_vinyl": 1.3,
})
#: Share of the price taken off by account type.
ACCOUNT_DISCOUNTS = MappingProxyType({"retail": 0.0, "business": 0.10, "nonprofit": 0.15})
TWO_SIDED_FACTOR = 1.3       # printing both sides
RUSH_FACTOR = 1.4            # rush jobs: 40% more, turnaround halved (rounded up)
DEPOSIT_SHARE = 0.5          # retail customers pay half before a job goes on a press
SETUP_FEE = 20.0             # kept when a job is cancelled after its proof was approved
EDITABLE = ("awaiting_proof", "proof_approved")
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _words(text: str) -> list[str]:
    """Lower-case words of a name, accents and apostrophes dropped ("Hye-jin O'Hara" -> [..., "ohara"])."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", plain.replace("'", ""))


def _digits(phone: str) -> str:
    return re.sub(r"\D", "", phone)


class PrintShop:
    """A print shop's customers, jobs and presses, seen from the counter."""

    def __init__(self, today: str = "2026-09-22", presses: dict[str, dict] | None = None,
                 customers: dict[str, dict] | None = None, jobs: dict[str, dict] | None = None) -> None:
        self._date(today, "today")
        self.today = today
        # press id ("PR-1") -> {"name", "kind": "digital" | "wide_format", "status": "running" | "down", "note"}
        self.presses: dict[str, dict] = copy.deepcopy(presses or {})
        # customer id ("CU-2041") -> {"name", "company" (or None), "email", "phone",
        #                             "account": "retail" | "business" | "nonprofit", "notes"}
        self.customers: dict[str, dict] = copy.deepcopy(customers or {})
        # job id ("PJ-5531") -> {"customer_id", "product", "quantity", "stock", "sides", "rush", "due_date",
        #     "status", "press_id" (or None), "price", "paid", "notes"} (+ "refunded" once cancelled)
        self.jobs: dict[str, dict] = copy.deepcopy(jobs or {})
        self._running = {j["press_id"]: jid for jid, j in sorted(self.jobs.items())
                         if j["status"] == "printing" and j.get("press_id")}
        self._next_job = 1 + max((int(k.split("-")[1]) for k in self.jobs), default=5500)

    # -- looking things up ---------------------------------------------------------------------------------

    @tool("read")
    def shop_status(self) -> dict:
        """Tell today's date and weekday, and the state of each press in the shop.

        Returns:
            Today as YYYY-MM-DD and its weekday; per press: id, name, kind ('digital' or 'wide_format'),
            whether it is running or down (with the note on why), and the job printing on it, if any.
        """
        return {"today": self.today, "weekday": WEEKDAY_NAMES[self._date(self.today, "today").weekday()],
                "presses": [{"press_id": pid, **copy.deepcopy(p), "printing_job": self._running.get(pid)}
                            for pid, p in sorted(self.presses.items())]}

    @tool("read")
    def find_customer(self, name: str | None = None, company: str | None = None,
                      phone: str | None = None) -> list[dict]:
        """Look up a customer by their name, their company or organisation, or phone number.

        Give at least one; all that are given must match.

        Args:
            name: The person's name or part of it, such as 'Oyelowo' or 'Tom L'; case and accents do not matter.
            company: Their company or organisation or part of it, such as 'bakery'.
            phone: Their phone number or its last 4 or more digits, in any format.

        Returns:
            Every matching customer (possibly none): id, name, company, email, phone, account type
            ('retail', 'business' or 'nonprofit'), notes, and the ids of their jobs not yet picked up.
        """
        if not any((name, company, phone)):
            raise ValueError("Give a name, a company or a phone number to search by.")
        name_words, company_words = _words(name or ""), _words(company or "")
        digits = _digits(phone or "")
        if phone and len(digits) < 4:
            raise ValueError(f"Phone {phone!r}: give at least the last 4 digits.")
        found = []
        for cid, customer in sorted(self.customers.items()):
            names, companies = _words(customer["name"]), _words(customer.get("company") or "")
            if name_words and not all(any(n.startswith(w) for n in names) for w in name_words):
                continue
            if company_words and not all(any(c.startswith(w) for c in companies) for w in company_words):
                continue
            if digits and not _digits(customer["phone"]).endswith(digits):
                continue
            found.append({"customer_id": cid, **copy.deepcopy(customer),
                          "open_jobs": [jid for jid, j in sorted(self.jobs.items()) if j["customer_id"] == cid
                                        and j["status"] not in ("picked_up", "cancelled")]})
        return found

    @tool("read")
    def list_jobs(self, customer_id: str | None = None, status: JobStatus | None = None,
                  due_date: str | None = None, press_id: str | None = None) -> list[dict]:
        """List print jobs by customer, status, due day or press.

        The filters given combine; with none, every job on file. Sorted by due day.

        Args:
            customer_id: Only this customer's jobs, such as 'CU-2041'.
            status: Only jobs in this status.
            due_date: Only jobs due on this day, as YYYY-MM-DD.
            press_id: Only jobs printed (or printing) on this press, such as 'PR-3'.

        Returns:
            Each job with its customer's name, product, quantity, stock, sides, rush, due day, status, press,
            price, amount paid, balance due and notes.
        """
        if customer_id is not None:
            self._customer(customer_id)
        if due_date is not None:
            self._date(due_date, "due_date")
        if press_id is not None:
            self._press(press_id)
        if status is not None and status not in get_args(JobStatus):
            raise ValueError(f"Status {status!r} is not one of: {', '.join(get_args(JobStatus))}.")
        rows = [self._job_record(jid) for jid, j in self.jobs.items()
                if (customer_id is None or j["customer_id"] == customer_id)
                and (status is None or j["status"] == status)
                and (due_date is None or j["due_date"] == due_date)
                and (press_id is None or j.get("press_id") == press_id)]
        return sorted(rows, key=lambda r: (r["due_date"], r["job_id"]))

    @tool("read")
    def quote_price(self, product: Product, quantity: int, stock: Stock, sides: int = 1, rush: bool = False,
                    customer_id: str | None = None) -> dict:
        """Price a job without ordering it, and tell the earliest day it can be ready.

        Args:
            product: What to print.
            quantity: How many pieces; each product has a smallest order and a step (business cards by 250).
            stock: The paper or material; each product prints on its own stocks only.
            sides: 1 or 2 printed sides (posters are single-sided).
            rush: Rush the job: 40% more, turnaround halved.
            customer_id: Apply this customer's account discount (business 10%, non-profit 15%).

        Returns:
            The price before and after the discount, the discount rate, the turnaround in days and the
            earliest due day.
        """
        self._check_spec(product, quantity, stock, sides)
        discount = ACCOUNT_DISCOUNTS[self._customer(customer_id)["account"]] if customer_id else 0.0
        days = self._turnaround(product, rush)
        return {"product": product, "quantity": quantity, "stock": stock, "sides": sides, "rush": rush,
                "list_price": self._price(product, quantity, stock, sides, rush, 0.0), "discount": discount,
                "price": self._price(product, quantity, stock, sides, rush, discount),
                "turnaround_days": days, "earliest_due_date": self._earliest(days)}

    # -- jobs ----------------------------------------------------------------------------------------------

    @tool("write")
    def create_job(self, customer_id: str, product: Product, quantity: int, stock: Stock, due_date: str,
                   sides: int = 1, rush: bool = False, notes: str | None = None) -> dict:
        """Open a print job for a customer; it waits for the customer to approve a proof.

        The due day must leave the product's turnaround (3 days for business cards and postcards, 2 for flyers
        and posters, 5 for booklets, 3 for banners; halved, rounded up, for rush) and cannot be a Sunday.

        Args:
            customer_id: The customer's id, such as 'CU-2041'.
            product: What to print.
            quantity: How many pieces; each product has a smallest order and a step (business cards by 250).
            stock: The paper or material, such as 'gloss_100lb'.
            due_date: The day the customer picks it up, as YYYY-MM-DD.
            sides: 1 or 2 printed sides.
            rush: Rush the job: 40% more, turnaround halved.
            notes: Instructions for the job, such as the file name or finishing.

        Returns:
            The new job with its id and price.
        """
        customer = self._customer(customer_id)
        self._check_spec(product, quantity, stock, sides)
        self._check_due(product, due_date, rush)
        jid = f"PJ-{self._next_job}"
        self._next_job += 1
        self.jobs[jid] = {"customer_id": customer_id, "product": product, "quantity": quantity, "stock": stock,
                          "sides": sides, "rush": rush, "due_date": due_date, "status": "awaiting_proof",
                          "press_id": None, "paid": 0.0, "notes": (notes or "").strip(),
                          "price": self._price(product, quantity, stock, sides, rush,
                                               ACCOUNT_DISCOUNTS[customer["account"]])}
        return self._job_record(jid)

    @tool("write")
    def update_job(self, job_id: str, quantity: int | None = None, stock: Stock | None = None,
                   sides: int | None = None, rush: bool | None = None, due_date: str | None = None,
                   notes: str | None = None) -> dict:
        """Change a job that has not gone to a press yet; the price is worked out again.

        A new stock or number of sides changes what is printed, so an approved proof must be approved again.
        The due day must still leave the turnaround. The new price cannot be less than what was already paid.

        Args:
            job_id: The job's id, such as 'PJ-5533'.
            quantity: The new number of pieces.
            stock: The new paper or material.
            sides: The new number of printed sides, 1 or 2.
            rush: Make it a rush job (true) or a standard one (false).
            due_date: The new due day, as YYYY-MM-DD.
            notes: New notes, replacing the old ones.

        Returns:
            The job as changed, with its new price.
        """
        job = self._job(job_id)
        if all(v is None for v in (quantity, stock, sides, rush, due_date, notes)):
            raise ValueError("Nothing to change: give a new quantity, stock, sides, rush, due day or notes.")
        if job["status"] not in EDITABLE:
            raise ValueError(f"{job_id} is {job['status']}; only a job not yet on a press can be changed.")
        new = {"quantity": job["quantity"] if quantity is None else quantity,
               "stock": job["stock"] if stock is None else stock,
               "sides": job["sides"] if sides is None else sides,
               "rush": job["rush"] if rush is None else rush,
               "due_date": job["due_date"] if due_date is None else due_date}
        self._check_spec(job["product"], new["quantity"], new["stock"], new["sides"])
        if due_date is not None or rush is not None:
            self._check_due(job["product"], new["due_date"], new["rush"])
        discount = ACCOUNT_DISCOUNTS[self.customers[job["customer_id"]]["account"]]
        price = self._price(job["product"], new["quantity"], new["stock"], new["sides"], new["rush"], discount)
        if price < job["paid"]:
            raise ValueError(f"The new price {price:.2f} is less than the {job['paid']:.2f} already paid.")
        reproof = (new["stock"], new["sides"]) != (job["stock"], job["sides"])
        job.update(new, price=price)
        if notes is not None:
            job["notes"] = notes.strip()
        if reproof:
            job["status"] = "awaiting_proof"
        return self._job_record(job_id)

    @tool("write")
    def approve_proof(self, job_id: str) -> dict:
        """Record that the customer approved the proof of a job, so that it can be printed.

        Args:
            job_id: The job's id, such as 'PJ-5535'.

        Returns:
            The job, now 'proof_approved'.
        """
        job = self._job(job_id)
        if job["status"] != "awaiting_proof":
            raise ValueError(f"{job_id} is {job['status']}; only a job awaiting its proof can be approved.")
        job["status"] = "proof_approved"
        return self._job_record(job_id)

    @tool("write")
    def send_to_press(self, job_id: str, press_id: str) -> dict:
        """Start printing an approved job on a press.

        The press must be running, of the kind the product needs (posters and banners: 'wide_format'; the rest:
        'digital') and free. A retail customer must have paid half the price first.

        Args:
            job_id: The job's id, such as 'PJ-5532'.
            press_id: The press's id, such as 'PR-1'.

        Returns:
            The job, now 'printing' on that press.
        """
        job = self._job(job_id)
        press = self._press(press_id)
        if job["status"] != "proof_approved":
            raise ValueError(f"{job_id} is {job['status']}; only a job with an approved proof can be printed.")
        kind = PRODUCT_SPECS[job["product"]]["kind"]
        if press["kind"] != kind:
            raise ValueError(f"{press['name']} is a {press['kind']} press; {job['product']} need a {kind} press.")
        if press["status"] != "running":
            raise ValueError(f"{press['name']} is down: {press.get('note') or 'no reason given'}.")
        if press_id in self._running:
            raise ValueError(f"{press['name']} is busy printing {self._running[press_id]}.")
        customer = self.customers[job["customer_id"]]
        deposit = round(job["price"] * DEPOSIT_SHARE, 2)
        if customer["account"] == "retail" and job["paid"] < deposit:
            raise ValueError(f"{customer['name']} has paid {job['paid']:.2f}; a retail job needs a deposit of "
                             f"{deposit:.2f} before printing.")
        job["status"] = "printing"
        job["press_id"] = press_id
        self._running[press_id] = job_id
        return self._job_record(job_id)

    @tool("write")
    def mark_job_ready(self, job_id: str) -> dict:
        """Take a finished job off its press and shelve it for pick-up.

        Args:
            job_id: The job's id, such as 'PJ-5531'.

        Returns:
            The job, now 'ready', with the balance the customer owes at pick-up.
        """
        job = self._job(job_id)
        if job["status"] != "printing":
            raise ValueError(f"{job_id} is {job['status']}; only a job that is printing can be marked ready.")
        self._running.pop(job["press_id"], None)
        job["status"] = "ready"
        return self._job_record(job_id)

    @tool("write")
    def record_payment(self, job_id: str, amount: float, method: PaymentMethod) -> dict:
        """Take a payment from the customer toward a job.

        Args:
            job_id: The job's id, such as 'PJ-5536'.
            amount: Dollars paid, more than zero and no more than the balance due.
            method: How they paid.

        Returns:
            The job with what has been paid and the balance still due.
        """
        job = self._job(job_id)
        if method not in PAYMENT_METHODS:
            raise ValueError(f"Payment method {method!r} is not accepted; use {', '.join(PAYMENT_METHODS)}.")
        if job["status"] in ("cancelled", "picked_up"):
            raise ValueError(f"{job_id} is {job['status']}; it takes no more payments.")
        amount = round(float(amount), 2)
        balance = round(job["price"] - job["paid"], 2)
        if amount <= 0:
            raise ValueError(f"Amount {amount} must be more than zero.")
        if amount > balance:
            raise ValueError(f"{job_id} has {balance:.2f} due; {amount:.2f} is more than that.")
        job["paid"] = round(job["paid"] + amount, 2)
        return {**self._job_record(job_id), "payment": amount, "method": method}

    @tool("write")
    def record_pickup(self, job_id: str) -> dict:
        """Hand a ready job to the customer.

        Retail and non-profit customers pay the balance first; a business account's balance is invoiced.

        Args:
            job_id: The job's id, such as 'PJ-5534'.

        Returns:
            The job, now 'picked_up', and the amount invoiced to the account (0 when paid in full).
        """
        job = self._job(job_id)
        if job["status"] != "ready":
            raise ValueError(f"{job_id} is {job['status']}; only a ready job can be picked up.")
        customer = self.customers[job["customer_id"]]
        balance = round(job["price"] - job["paid"], 2)
        if balance > 0 and customer["account"] != "business":
            raise ValueError(f"{customer['name']} still owes {balance:.2f} on {job_id}; take the payment first.")
        job["status"] = "picked_up"
        return {**self._job_record(job_id), "invoiced": balance}

    @tool("write")
    def cancel_job(self, job_id: str) -> dict:
        """Cancel a job that has not gone to a press, refunding what was paid.

        Once its proof was approved, a $20 setup fee is kept (the job's price becomes the fee).

        Args:
            job_id: The job's id, such as 'PJ-5537'.

        Returns:
            The cancelled job, the fee and the amount refunded.
        """
        job = self._job(job_id)
        if job["status"] not in EDITABLE:
            raise ValueError(f"{job_id} is {job['status']}; only a job not yet on a press can be cancelled.")
        fee = SETUP_FEE if job["status"] == "proof_approved" else 0.0
        refund = round(max(job["paid"] - fee, 0.0), 2)
        job.update(status="cancelled", price=fee, paid=round(job["paid"] - refund, 2), refunded=refund)
        return {**self._job_record(job_id), "setup_fee": fee}

    # -- helpers -------------------------------------------------------------------------------------------

    @staticmethod
    def _date(value: str, what: str) -> Date:
        if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
            raise ValueError(f"{what} {value!r} is not a date as YYYY-MM-DD.")
        try:
            return Date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{what} {value!r} is not a real date.") from None

    def _customer(self, customer_id: str) -> dict:
        if customer_id not in self.customers:
            raise ValueError(f"No customer with id {customer_id!r}.")
        return self.customers[customer_id]

    def _press(self, press_id: str) -> dict:
        if press_id not in self.presses:
            raise ValueError(f"No press with id {press_id!r}; presses: {', '.join(sorted(self.presses))}.")
        return self.presses[press_id]

    def _job(self, job_id: str) -> dict:
        if job_id not in self.jobs:
            raise ValueError(f"No job with id {job_id!r}.")
        return self.jobs[job_id]

    @staticmethod
    def _check_spec(product: str, quantity: int, stock: str, sides: int) -> None:
        if product not in PRODUCT_SPECS:
            raise ValueError(f"Product {product!r} is not one of: {', '.join(PRODUCTS)}.")
        spec = PRODUCT_SPECS[product]
        if not isinstance(quantity, int) or isinstance(quantity, bool):
            raise ValueError(f"Quantity {quantity!r} must be a whole number.")
        if quantity < spec["min_qty"] or quantity % spec["step"]:
            raise ValueError(f"{product} are ordered from {spec['min_qty']} pieces"
                             + (f", in steps of {spec['step']}" if spec["step"] > 1 else "") + f"; not {quantity}.")
        if stock not in spec["stocks"]:
            raise ValueError(f"{product} print on {', '.join(spec['stocks'])}; not on {stock!r}.")
        if sides not in (1, 2) or (sides == 2 and not spec["two_sided"]):
            raise ValueError(f"{product} can be printed on " + ("1 or 2 sides" if spec["two_sided"] else "1 side")
                             + f"; not {sides!r}.")

    @staticmethod
    def _turnaround(product: str, rush: bool) -> int:
        days = PRODUCT_SPECS[product]["turnaround"]
        return math.ceil(days / 2) if rush else days

    def _earliest(self, days: int) -> str:
        day = self._date(self.today, "today") + timedelta(days=days)
        if day.weekday() == 6:
            day += timedelta(days=1)
        return day.isoformat()

    def _check_due(self, product: str, due_date: str, rush: bool) -> None:
        day = self._date(due_date, "due_date")
        if day.weekday() == 6:
            raise ValueError(f"{due_date} is a Sunday; the shop is closed.")
        days = self._turnaround(product, rush)
        earliest = self._earliest(days)
        if due_date < earliest:
            raise ValueError(f"{'Rush ' if rush else ''}{product} take {days} day{'s' if days > 1 else ''}; "
                             f"the earliest due day is {earliest}, not {due_date}.")

    @staticmethod
    def _price(product: str, quantity: int, stock: str, sides: int, rush: bool, discount: float) -> float:
        price = PRODUCT_SPECS[product]["unit_price"] * quantity * STOCK_FACTORS[stock]
        price *= (TWO_SIDED_FACTOR if sides == 2 else 1.0) * (RUSH_FACTOR if rush else 1.0) * (1 - discount)
        return round(price, 2)

    def _job_record(self, job_id: str) -> dict:
        job = self.jobs[job_id]
        return {"job_id": job_id, **copy.deepcopy(job),
                "customer": self.customers.get(job["customer_id"], {}).get("name"),
                "balance_due": round(job["price"] - job["paid"], 2)}
