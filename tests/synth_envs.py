"""Small Python environments for the synthesis tests (importable as `synth_envs:<Class>`).

Each has ids in its state, read and write tools, and seed tasks (`SEEDS`)
whose ground truths feed one call's result into the next, so synthesis must
keep a data-flow graph, not only a list of calls.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from rods.envs import tool


class Page(BaseModel):
    title: str
    text: str
    tags: list[str] = []


class Journal:
    """A notebook whose pages have ids (a pydantic model per page), built by its constructor from its state.

    Setting `pages` as an attribute would leave plain dicts where pages belong (the
    annotation inside `__init__` is not visible to the loader): the constructor makes them pages.
    """

    def __init__(self, pages: dict[str, Any] | None = None, next_id: int = 1) -> None:
        self.pages: dict[str, Page] = {k: Page.model_validate(v) for k, v in (pages or {}).items()}
        self.next_id = next_id

    @tool("write")
    def create_page(self, title: str, text: str) -> dict[str, str]:
        """Start a new page in the journal and return its id.

        Args:
            title: the heading of the page
            text: the body of the page
        """
        page_id = f"pg{self.next_id:03d}"
        self.next_id += 1
        self.pages[page_id] = Page(title=title, text=text)
        return {"page_id": page_id}

    @tool("write")
    def tag_page(self, page_id: str, tag: str) -> str:
        """Attach a label to a page so it can be found later."""
        self.pages[page_id].tags.append(tag)
        return "tagged"

    @tool("write")
    def delete_page(self, page_id: str) -> str:
        """Throw a page away."""
        del self.pages[page_id]
        return "deleted"

    @tool("read")
    def show_page(self, page_id: str) -> Page:
        """Everything written on one page."""
        return self.pages[page_id]

    @tool("read")
    def find_pages(self, word: str) -> list[str]:
        """Ids of the pages whose heading or body holds a word."""
        return sorted(k for k, p in self.pages.items() if word.lower() in (p.title + " " + p.text).lower())

    @tool("read")
    def list_pages(self, order: Literal["asc", "desc"] = "asc") -> list[str]:
        """Ids of every page."""
        return sorted(self.pages, reverse=order == "desc")


class Shop:
    """A tiny inventory and order book with item and order ids (plain attributes)."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.orders: dict[str, dict[str, Any]] = {}

    @tool("read")
    def search_items(self, keyword: str) -> list[dict[str, Any]]:
        """Products whose name holds a keyword, with their ids and prices."""
        return [{"item_id": k, **v} for k, v in sorted(self.items.items()) if keyword.lower() in v["name"].lower()]

    @tool("read")
    def item_details(self, item_id: str) -> dict[str, Any]:
        """Name, price and stock of one product."""
        return {"item_id": item_id, **self.items[item_id]}

    @tool("write")
    def place_order(self, item_id: str, quantity: int) -> dict[str, Any]:
        """Buy some units of a product; returns the new order's id and total."""
        item = self.items[item_id]
        if quantity < 1 or quantity > item["stock"]:
            raise ValueError(f"cannot order {quantity} of {item_id}: {item['stock']} in stock")
        item["stock"] -= quantity
        order_id = f"o{len(self.orders) + 1001}"
        self.orders[order_id] = {"item_id": item_id, "quantity": quantity, "status": "placed"}
        return {"order_id": order_id, "total": round(item["price"] * quantity, 2)}

    @tool("write")
    def cancel_order(self, order_id: str) -> str:
        """Call off an order that has not shipped; its units go back on the shelf."""
        order = self.orders[order_id]
        if order["status"] != "placed":
            raise ValueError(f"order {order_id} is {order['status']}")
        order["status"] = "cancelled"
        self.items[order["item_id"]]["stock"] += order["quantity"]
        return "cancelled"

    @tool("write")
    def restock(self, item_id: str, amount: int) -> int:
        """Put more units of a product on the shelf; returns the new stock."""
        self.items[item_id]["stock"] += amount
        return int(self.items[item_id]["stock"])

    @tool("read")
    def order_status(self, order_id: str) -> dict[str, Any]:
        """Where an order stands."""
        return {"order_id": order_id, **self.orders[order_id]}


class Bank:
    """Accounts with balances; loaded through `_reset` (a config that is not its attributes)."""

    def __init__(self) -> None:
        self.accounts: dict[str, dict[str, Any]] = {}
        self.log: list[str] = []

    def _reset(self, config: dict, seed: int | None) -> None:
        for owner, balance in config.get("customers", {}).items():
            self.accounts[f"acc-{len(self.accounts) + 100}"] = {"owner": owner, "balance": float(balance)}

    @tool("read")
    def find_account(self, owner: str) -> dict[str, Any]:
        """The account of a customer, by the customer's name."""
        for account_id, account in sorted(self.accounts.items()):
            if account["owner"] == owner:
                return {"account_id": account_id, **account}
        raise KeyError(f"no account for {owner}")

    @tool("read")
    def balance(self, account_id: str) -> float:
        """How much money an account holds."""
        return float(self.accounts[account_id]["balance"])

    @tool("write")
    def deposit(self, account_id: str, amount: float) -> float:
        """Pay money into an account; returns the new balance."""
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.accounts[account_id]["balance"] = round(self.accounts[account_id]["balance"] + amount, 2)
        self.log.append(f"deposit {account_id} {amount}")
        return float(self.accounts[account_id]["balance"])

    @tool("write")
    def transfer(self, from_account: str, to_account: str, amount: float) -> str:
        """Move money between two accounts."""
        if amount <= 0 or self.accounts[from_account]["balance"] < amount:
            raise ValueError("insufficient funds")
        if from_account == to_account:
            raise ValueError("same account")
        self.accounts[from_account]["balance"] = round(self.accounts[from_account]["balance"] - amount, 2)
        self.accounts[to_account]["balance"] = round(self.accounts[to_account]["balance"] + amount, 2)
        self.log.append(f"transfer {from_account} {to_account} {amount}")
        return "done"

    @tool("read")
    def statement(self, account_id: str) -> list[str]:
        """The movements that touched an account."""
        return [line for line in self.log if account_id in line]


def _task(env: str, id_: str, queries: list[str], truth: list[list[str]], config: dict, **over: Any) -> dict:
    body = {"id": id_, "category": "base", "environment": f"synth_envs:{env}",
            "question": [[{"role": "user", "content": q}] if q else [] for q in queries],
            "ground_truth": truth, "initial_config": {f"synth_envs:{env}": config}}
    body.update(over)
    return body


_JOURNAL = {"pages": {"pg001": {"title": "Harbor trip", "text": "Pack the umbrella and the maps."},
                      "pg002": {"title": "Recipes", "text": "Lentil soup with cumin."}},
            "next_id": 3}
_SHOP = {"items": {"sku-501": {"name": "Walnut desk lamp", "price": 39.5, "stock": 12},
                   "sku-502": {"name": "Brass desk clock", "price": 24.0, "stock": 4},
                   "sku-503": {"name": "Linen notebook", "price": 7.25, "stock": 30}},
         "orders": {}}
_BANK = {"customers": {"Amelia Hart": 820.0, "Tomas Reyes": 150.5, "Priya Nair": 2300.0}}

#: Seed tasks as JSON-able dicts (validate with `Task.model_validate`).
SEEDS: list[dict] = [
    _task("Journal", "journal-0", ["Start a page 'Garden plan' saying 'Plant basil in May', then tag it 'spring'.",
                                   "Now show me that page."],
          [["create_page(title='Garden plan', text='Plant basil in May')", "tag_page(page_id='pg003', tag='spring')"],
           ["show_page(page_id='pg003')"]], _JOURNAL),
    _task("Journal", "journal-1", ["Which pages mention soup?", "Throw away the Harbor trip page."],
          [["find_pages(word='soup')"], ["delete_page(page_id='pg001')"]], _JOURNAL),
    _task("Shop", "shop-0", ["Find desk lamps and buy 2 of the walnut one.", "Where does that order stand?"],
          [["search_items(keyword='lamp')", "place_order(item_id='sku-501', quantity=2)"],
           ["order_status(order_id='o1001')"]], _SHOP),
    _task("Shop", "shop-1", ["Put 15 more brass clocks on the shelf.", "Tell me about the linen notebook."],
          [["restock(item_id='sku-502', amount=15)"], ["item_details(item_id='sku-503')"]], _SHOP),
    _task("Bank", "bank-0", ["Find Amelia Hart's account and pay 75.25 into it.", "What is its balance now?"],
          [["find_account(owner='Amelia Hart')", "deposit(account_id='acc-100', amount=75.25)"],
           ["balance(account_id='acc-100')"]], _BANK),
    _task("Bank", "bank-1", ["Move 120.0 from acc-102 to acc-101.", "Show me the movements of acc-101."],
          [["transfer(from_account='acc-102', to_account='acc-101', amount=120.0)"],
           ["statement(account_id='acc-101')"]], _BANK),
    _task("Shop", "shop-mf", ["Find brass clocks for me.", "", ],
          [[], ["search_items(keyword='clock')"]], _SHOP, category="miss_func",
          missed_function={"1": ["search_items"]}),
    _task("Bank", "bank-mp", ["Pay some money into account acc-101.", "Sorry: 60.75 it is."],
          [[], ["deposit(account_id='acc-101', amount=60.75)"]], _BANK, category="miss_param"),
]
