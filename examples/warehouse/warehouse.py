"""A distribution warehouse's stock, sales orders and purchase orders as a rods environment.

The state is what the warehouse system holds for one site: the business date, the product
catalogue with bin locations and quantities on hand, customer accounts, sales orders, suppliers,
purchase orders and the stock-adjustment log. Quantities promised to open sales orders are
allocated, not yet taken off the shelf: a product's available stock is its quantity on hand
less what open and picking orders still need, and shipping an order takes its lines off hand.
"""

from __future__ import annotations

import copy
import re
from datetime import date, timedelta
from types import MappingProxyType
from typing import Literal

from typing_extensions import TypedDict

from rods.envs import tool

#: Discount on an order's subtotal by customer tier.
TIER_DISCOUNT = MappingProxyType({"gold": 0.05, "silver": 0.025, "standard": 0.0})
#: Carriers the dispatch desk books, by the lower-case spelling a request may use.
CARRIERS = MappingProxyType({c.lower(): c for c in ("DPD", "GLS", "DHL Express", "An Post", "Own fleet")})
#: Bin codes: zone letter, aisle, shelf level (A-02-1).
BIN_PATTERN = re.compile(r"^[A-D]-\d{2}-\d$")
#: Order statuses whose lines still hold stock.
ALLOCATING = ("open", "picking")
#: Adjustment reasons that may only take stock off, or only put it back.
REMOVING_REASONS = ("damaged", "expired")
ADDING_REASONS = ("customer_return", "found")


class Line(TypedDict):
    """One line of a sales or purchase order."""

    sku: str
    qty: int


def _number(record_id: str) -> int:
    """The running number of an id such as 'SO-5512' or 'PO-3301'."""
    return int(record_id.rsplit("-", 1)[1])


class Warehouse:
    """One warehouse site: products, customers, sales orders, suppliers and purchase orders."""

    def __init__(
        self,
        today: str = "2025-01-02",
        products: dict[str, dict] | None = None,
        customers: dict[str, dict] | None = None,
        orders: dict[str, dict] | None = None,
        suppliers: dict[str, dict] | None = None,
        purchase_orders: dict[str, dict] | None = None,
        stock_adjustments: list[dict] | None = None,
    ) -> None:
        date.fromisoformat(today)  # the business date must be an ISO date
        self.today = today
        # SKU -> {"name", "category", "unit_price", "bin", "on_hand", "reorder_level", "supplier_id"}
        self.products: dict[str, dict] = copy.deepcopy(products or {})
        # customer id -> {"company", "contact", "city", "tier", "on_hold"}
        self.customers: dict[str, dict] = copy.deepcopy(customers or {})
        # order id -> {"customer_id", "status", "placed_on", "ship_date", "lines": [{"sku", "qty", "unit_price"}],
        #              "carrier", "shipped_on", "cancel_reason"}
        self.orders: dict[str, dict] = copy.deepcopy(orders or {})
        # supplier id -> {"name", "email", "lead_time_days"}
        self.suppliers: dict[str, dict] = copy.deepcopy(suppliers or {})
        # PO id -> {"supplier_id", "status", "ordered_on", "expected_on", "received_on", "lines": [{"sku", "qty"}]}
        self.purchase_orders: dict[str, dict] = copy.deepcopy(purchase_orders or {})
        # the audit log of manual stock corrections: {"sku", "delta", "reason", "on"}
        self.stock_adjustments: list[dict] = copy.deepcopy(stock_adjustments or [])
        # the next free document numbers follow the highest ones on file
        self._next_order_no = 1 + max((_number(o) for o in self.orders), default=5000)
        self._next_po_no = 1 + max((_number(p) for p in self.purchase_orders), default=3000)

    # -- lookups shared by the tools ---------------------------------------------------------------------

    def _product(self, sku: str) -> dict:
        if sku not in self.products:
            raise ValueError(f"No product with SKU {sku!r}")
        return self.products[sku]

    def _customer(self, customer_id: str) -> dict:
        if customer_id not in self.customers:
            raise ValueError(f"No customer account {customer_id!r}")
        return self.customers[customer_id]

    def _order(self, order_id: str) -> dict:
        if order_id not in self.orders:
            raise ValueError(f"No sales order {order_id!r}")
        return self.orders[order_id]

    def _supplier(self, supplier_id: str) -> dict:
        if supplier_id not in self.suppliers:
            raise ValueError(f"No supplier {supplier_id!r}")
        return self.suppliers[supplier_id]

    def _allocated(self, sku: str) -> int:
        return sum(line["qty"] for order in self.orders.values() if order["status"] in ALLOCATING
                   for line in order["lines"] if line["sku"] == sku)

    def _on_order(self, sku: str) -> int:
        return sum(line["qty"] for po in self.purchase_orders.values() if po["status"] == "open"
                   for line in po["lines"] if line["sku"] == sku)

    def _summary(self, sku: str) -> dict:
        p = self.products[sku]
        return {"sku": sku, "name": p["name"], "category": p["category"], "bin": p["bin"],
                "on_hand": p["on_hand"], "available": p["on_hand"] - self._allocated(sku),
                "reorder_level": p["reorder_level"]}

    def _checked_lines(self, lines: list[Line]) -> list[dict]:
        """Order lines as plain dicts, each SKU known, once, with a positive whole quantity."""
        if not lines:
            raise ValueError("An order needs at least one line")
        checked: list[dict] = []
        for line in lines:
            if not isinstance(line, dict):
                raise ValueError(f"Each line is an object with 'sku' and 'qty', got {line!r}")
            sku, qty = line.get("sku"), line.get("qty")
            self._product(sku)
            if not isinstance(qty, int) or isinstance(qty, bool) or qty <= 0:
                raise ValueError(f"Quantity for {sku} must be a positive whole number, got {qty!r}")
            if any(c["sku"] == sku for c in checked):
                raise ValueError(f"{sku} appears on more than one line; put the total on one line")
            checked.append({"sku": sku, "qty": qty})
        return checked

    # -- products ----------------------------------------------------------------------------------------

    @tool("read")
    def find_products(self, query: str = "", category: str | None = None, zone: str | None = None,
                      low_stock: bool = False) -> list[dict]:
        """Search the product catalogue by name or SKU, category or zone.

        Args:
            query: Words from the product name or SKU, case-insensitive; a product matches when it
                contains every word. Empty matches every product.
            category: Only products of this category: 'Fasteners', 'Hand Tools', 'Power Tools',
                'Safety Gear' or 'Packaging'.
            zone: Only products binned in this zone, the letter a bin code starts with (A to D).
            low_stock: Only products whose quantity on hand is at or below their reorder level.

        Returns:
            One summary per matching product, by SKU: name, category, bin, on_hand, available
            (on hand less what open orders need) and reorder_level.
        """
        words = query.lower().split()
        found = []
        for sku, p in sorted(self.products.items()):
            text = f"{sku} {p['name']}".lower()
            if not all(word in text for word in words):
                continue
            if category is not None and p["category"].lower() != category.strip().lower():
                continue
            if zone is not None and p["bin"][0] != zone.strip().upper():
                continue
            if low_stock and p["on_hand"] > p["reorder_level"]:
                continue
            found.append(self._summary(sku))
        return found

    @tool("read")
    def get_product(self, sku: str) -> dict:
        """Look up one product: stock, allocation, incoming purchase orders, price and supplier.

        Args:
            sku: The product's SKU, such as 'SKU-20431'.
        """
        p = self._product(sku)
        supplier = self.suppliers.get(p["supplier_id"], {})
        return {**self._summary(sku), "zone": p["bin"][0], "unit_price": p["unit_price"],
                "allocated": self._allocated(sku), "on_order": self._on_order(sku),
                "supplier_id": p["supplier_id"], "supplier_name": supplier.get("name"),
                "lead_time_days": supplier.get("lead_time_days")}

    @tool("write")
    def adjust_stock(self, sku: str, delta: int,
                     reason: Literal["damaged", "expired", "cycle_count", "customer_return", "found"]) -> dict:
        """Correct the quantity on hand of a product and log why.

        Args:
            sku: The product's SKU.
            delta: Units to add (positive) or write off (negative).
            reason: Why the stock changed. 'damaged' and 'expired' only take stock off,
                'customer_return' and 'found' only add it, 'cycle_count' goes either way.
        """
        p = self._product(sku)
        if not isinstance(delta, int) or isinstance(delta, bool) or delta == 0:
            raise ValueError("delta must be a non-zero whole number of units")
        if reason in REMOVING_REASONS and delta > 0:
            raise ValueError(f"A '{reason}' adjustment takes stock off: delta must be negative")
        if reason in ADDING_REASONS and delta < 0:
            raise ValueError(f"A '{reason}' adjustment puts stock back: delta must be positive")
        if p["on_hand"] + delta < 0:
            raise ValueError(f"Only {p['on_hand']} of {sku} on hand; cannot take off {-delta}")
        p["on_hand"] += delta
        self.stock_adjustments.append({"sku": sku, "delta": delta, "reason": reason, "on": self.today})
        return {"sku": sku, "on_hand": p["on_hand"], "available": p["on_hand"] - self._allocated(sku)}

    @tool("write")
    def move_stock(self, sku: str, to_bin: str) -> dict:
        """Move a product to another bin.

        Args:
            sku: The product's SKU.
            to_bin: The bin code to move it to, zone-aisle-level, such as 'A-02-1'.
        """
        p = self._product(sku)
        to_bin = to_bin.strip().upper()
        if not BIN_PATTERN.match(to_bin):
            raise ValueError(f"{to_bin!r} is not a bin code; bins look like 'A-02-1' (zones A to D)")
        if p["bin"] == to_bin:
            raise ValueError(f"{sku} is already in bin {to_bin}")
        holder = next((s for s, q in self.products.items() if q["bin"] == to_bin), None)
        if holder is not None:
            raise ValueError(f"Bin {to_bin} already holds {holder} ({self.products[holder]['name']})")
        from_bin, p["bin"] = p["bin"], to_bin
        return {"sku": sku, "from_bin": from_bin, "to_bin": to_bin, "zone": to_bin[0]}

    # -- customers and sales orders ----------------------------------------------------------------------

    @tool("read")
    def find_customer(self, query: str) -> list[dict]:
        """Find customer accounts by company or contact name.

        Args:
            query: Part of the company name or of the contact person's name, case-insensitive.
        """
        needle = query.strip().lower()
        if not needle:
            raise ValueError("Give part of a company or contact name to search for")
        return [{"customer_id": cid, **c} for cid, c in sorted(self.customers.items())
                if needle in c["company"].lower() or needle in c["contact"].lower()]

    @tool("read")
    def list_orders(self, customer_id: str | None = None,
                    status: Literal["open", "picking", "shipped", "cancelled"] | None = None) -> list[dict]:
        """List sales orders, for one customer or in one status.

        Args:
            customer_id: Only this customer's orders, by account id such as 'C-1003'.
            status: Only orders in this status.
        """
        if customer_id is not None:
            self._customer(customer_id)
        return [{"order_id": oid, "customer_id": o["customer_id"], "status": o["status"],
                 "placed_on": o["placed_on"], "ship_date": o["ship_date"],
                 "lines": [{"sku": line["sku"], "qty": line["qty"]} for line in o["lines"]]}
                for oid, o in sorted(self.orders.items())
                if (customer_id is None or o["customer_id"] == customer_id)
                and (status is None or o["status"] == status)]

    @tool("read")
    def get_order(self, order_id: str) -> dict:
        """Show a sales order with its lines, the customer's discount and the total.

        Args:
            order_id: The order number, such as 'SO-5512'.
        """
        o = self._order(order_id)
        customer = self.customers.get(o["customer_id"], {})
        lines = [{"sku": line["sku"], "name": self.products.get(line["sku"], {}).get("name"), "qty": line["qty"],
                  "unit_price": line["unit_price"], "line_total": round(line["qty"] * line["unit_price"], 2)}
                 for line in o["lines"]]
        subtotal = round(sum(line["line_total"] for line in lines), 2)
        discount = round(subtotal * TIER_DISCOUNT.get(customer.get("tier", "standard"), 0.0), 2)
        return {"order_id": order_id, "customer_id": o["customer_id"], "company": customer.get("company"),
                "status": o["status"], "placed_on": o["placed_on"], "ship_date": o["ship_date"], "lines": lines,
                "subtotal": subtotal, "discount": discount, "total": round(subtotal - discount, 2),
                "carrier": o["carrier"], "shipped_on": o["shipped_on"], "cancel_reason": o["cancel_reason"]}

    @tool("write")
    def create_order(self, customer_id: str, lines: list[Line], ship_date: str | None = None) -> dict:
        """Place a sales order for a customer, allocating the stock it needs.

        Args:
            customer_id: The customer's account id, such as 'C-1001'.
            lines: The products and quantities ordered, one line per SKU, e.g.
                [{"sku": "SKU-20431", "qty": 5}]. Prices are taken from the catalogue.
            ship_date: The requested dispatch date as YYYY-MM-DD; today if left out.
        """
        customer = self._customer(customer_id)
        if customer["on_hold"]:
            raise ValueError(f"{customer['company']} ({customer_id}) is on credit hold; no new orders")
        checked = self._checked_lines(lines)
        if ship_date is None:
            ship_date = self.today
        try:
            requested = date.fromisoformat(ship_date)
        except ValueError:
            raise ValueError(f"ship_date must be a date as YYYY-MM-DD, got {ship_date!r}") from None
        if requested < date.fromisoformat(self.today):
            raise ValueError(f"ship_date {ship_date} is in the past (today is {self.today})")
        for line in checked:
            available = self.products[line["sku"]]["on_hand"] - self._allocated(line["sku"])
            if line["qty"] > available:
                raise ValueError(f"Only {max(available, 0)} of {line['sku']} available, {line['qty']} ordered")
        order_id = f"SO-{self._next_order_no}"
        self._next_order_no += 1
        self.orders[order_id] = {
            "customer_id": customer_id, "status": "open", "placed_on": self.today, "ship_date": requested.isoformat(),
            "lines": [{**line, "unit_price": self.products[line["sku"]]["unit_price"]} for line in checked],
            "carrier": None, "shipped_on": None, "cancel_reason": None,
        }
        return {"order_id": order_id, "customer_id": customer_id, "status": "open",
                "ship_date": requested.isoformat(), "lines": checked}

    @tool("write")
    def cancel_order(self, order_id: str,
                     reason: Literal["customer_request", "credit_hold", "out_of_stock", "duplicate"]) -> dict:
        """Cancel a sales order that has not shipped, releasing its stock.

        Args:
            order_id: The order number, such as 'SO-5512'.
            reason: Why the order is cancelled.
        """
        o = self._order(order_id)
        if o["status"] == "shipped":
            raise ValueError(f"{order_id} shipped on {o['shipped_on']}; book a return instead of cancelling")
        if o["status"] == "cancelled":
            raise ValueError(f"{order_id} is already cancelled")
        o["status"], o["cancel_reason"] = "cancelled", reason
        return {"order_id": order_id, "status": "cancelled",
                "released": [{"sku": line["sku"], "qty": line["qty"]} for line in o["lines"]]}

    @tool("write")
    def ship_order(self, order_id: str, carrier: str) -> dict:
        """Dispatch a sales order today, taking its lines off the shelf.

        Args:
            order_id: The order number, such as 'SO-5512'.
            carrier: The carrier collecting the consignment, as booked with the dispatch desk.
        """
        o = self._order(order_id)
        booked = CARRIERS.get(carrier.strip().lower())
        if booked is None:
            raise ValueError(f"{carrier!r} is not a carrier we book; use one of {', '.join(CARRIERS.values())}")
        if o["status"] not in ALLOCATING:
            raise ValueError(f"{order_id} is {o['status']}; only open or picking orders can ship")
        customer = self.customers.get(o["customer_id"], {})
        if customer.get("on_hold"):
            raise ValueError(f"{customer['company']} is on credit hold; dispatch is blocked")
        for line in o["lines"]:
            on_hand = self.products[line["sku"]]["on_hand"]
            if line["qty"] > on_hand:
                raise ValueError(f"Only {on_hand} of {line['sku']} on hand, {line['qty']} to ship on {order_id}")
        for line in o["lines"]:
            self.products[line["sku"]]["on_hand"] -= line["qty"]
        o["status"], o["carrier"], o["shipped_on"] = "shipped", booked, self.today
        return {"order_id": order_id, "status": "shipped", "carrier": booked, "shipped_on": self.today}

    # -- suppliers and purchase orders -------------------------------------------------------------------

    @tool("write")
    def create_purchase_order(self, supplier_id: str, lines: list[Line]) -> dict:
        """Raise a purchase order with a supplier; it is due after the supplier's lead time.

        Args:
            supplier_id: The supplier's id, such as 'SUP-02' (a product's record names its supplier).
            lines: The products and quantities to buy, one line per SKU, e.g. [{"sku": "SKU-20490", "qty": 40}].
                Every product must be one this supplier sources.
        """
        supplier = self._supplier(supplier_id)
        checked = self._checked_lines(lines)
        for line in checked:
            if self.products[line["sku"]]["supplier_id"] != supplier_id:
                raise ValueError(f"{line['sku']} is sourced from {self.products[line['sku']]['supplier_id']}, "
                                 f"not {supplier_id}")
        po_id = f"PO-{self._next_po_no}"
        self._next_po_no += 1
        expected = (date.fromisoformat(self.today) + timedelta(days=supplier["lead_time_days"])).isoformat()
        self.purchase_orders[po_id] = {"supplier_id": supplier_id, "status": "open", "ordered_on": self.today,
                                       "expected_on": expected, "received_on": None, "lines": checked}
        return {"po_id": po_id, "supplier": supplier["name"], "expected_on": expected, "lines": checked}

    @tool("write")
    def receive_purchase_order(self, po_id: str) -> dict:
        """Book in a supplier delivery against its purchase order, putting the stock on hand.

        Args:
            po_id: The purchase order number, such as 'PO-3301'.
        """
        if po_id not in self.purchase_orders:
            raise ValueError(f"No purchase order {po_id!r}")
        po = self.purchase_orders[po_id]
        if po["status"] != "open":
            raise ValueError(f"{po_id} is {po['status']}; only open purchase orders can be received")
        for line in po["lines"]:
            self._product(line["sku"])
        for line in po["lines"]:
            self.products[line["sku"]]["on_hand"] += line["qty"]
        po["status"], po["received_on"] = "received", self.today
        return {"po_id": po_id, "received_on": self.today,
                "lines": [{"sku": line["sku"], "qty": line["qty"], "name": self.products[line["sku"]]["name"],
                           "on_hand": self.products[line["sku"]]["on_hand"]} for line in po["lines"]]}
