"""What each BFCL function achieves, in a person's words: the template backend's phrase table.

A user asks for outcomes ("show me the end of 'log.txt'"), not for functions
("display the last part of a file with file name 'log.txt'"). `OUTCOMES` holds,
as data, one outcome phrase per function of the eight classes: `{param}` slots
stand for the call's arguments; optional arguments add a segment only when the
call has them (a boolean segment is a pair: said when true, said when false;
a code's segment maps each code to words).
A slot is said three ways:

* a value the user supplies: the value itself (`FORMS` wraps some: "ticket 42");
* a value the model must take from an earlier result: "that file" (`NOUNS`), so
  the query never gives it away;
* the value a miss_param turn leaves out: "some file".

Phrases avoid the doc's wording and never recite a parameter name next to its
value, so they pass :func:`rods.synth.leak.leaks`; each keeps one content word
of the description, so the judge can still see which call a query asks for.
A function missing from the table (any tool of a non-BFCL environment) gets a
generic request built from its name, description and arguments
(`generic_outcome`): "get the user details for user 'ana_5901'", "place the
order of 2 for item 'sku-7'", "tag that page with 'spring'".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

#: function -> (outcome with slots for the required parameters, {optional parameter: segment}).
OUTCOMES: dict[str, tuple[str, dict[str, Any]]] = {
    # GorillaFileSystem
    "cat": ("show me the contents of {file_name}", {}),
    "cd": ("go into {folder}", {}),
    "cp": ("make a copy of {source} in {destination}", {}),
    "diff": ("compare {file_name1} with {file_name2} and tell me what differs", {}),
    "du": ("tell me how much disk space everything here takes", {"human_readable": ("in a readable format", "")}),
    "echo": ("write {content}", {"file_name": "into {file_name}"}),
    "find": ("find everything", {"name": "with {name} in its name", "path": "under {path}"}),
    "grep": ("search {file_name} for the lines that mention {pattern}", {}),
    "ls": ("show me the contents of this folder", {"a": ("including hidden files", "")}),
    "mkdir": ("create a folder called {dir_name}", {}),
    "mv": ("move {source} into {destination}", {}),
    "pwd": ("tell me which directory I am in right now", {}),
    "rm": ("remove {file_name} for good", {}),
    "rmdir": ("remove {dir_name} entirely, it is an empty folder", {}),
    "sort": ("sort {file_name} alphabetically", {}),
    "tail": ("show me the last part of {file_name}", {"lines": "(just the final {lines} lines)"}),
    "touch": ("create an empty file called {file_name}", {}),
    "wc": ("count what is in {file_name}", {"mode": {"l": "line by line", "w": "word by word",
                                                     "c": "character by character"}}),
    # MathAPI
    "absolute_value": ("tell me the absolute size of {number}, ignoring its sign", {}),
    "add": ("add these two numbers together: {a} and {b}", {}),
    "divide": ("divide {a} by {b}", {}),
    "imperial_si_conversion": ("convert {value} from {unit_in} to {unit_out}", {}),
    "logarithm": ("work out the logarithm of {value} with {base} as the base, to {precision} digits", {}),
    "max_value": ("find the maximum among {numbers}", {}),
    "mean": ("work out the mean of {numbers}", {}),
    "min_value": ("find the minimum among {numbers}", {}),
    "multiply": ("multiply {a} by {b}", {}),
    "percentage": ("tell me what percentage {part} makes out of {whole}", {}),
    "power": ("raise {base} to the power of {exponent}", {}),
    "round_number": ("round {number}", {"decimal_places": "to {decimal_places} decimal places"}),
    "si_unit_conversion": ("convert {value} from {unit_in} to {unit_out}", {}),
    "square_root": ("take the square root of {number} to {precision} digits", {}),
    "standard_deviation": ("work out the standard deviation of {numbers}", {}),
    "subtract": ("subtract {b} from {a}", {}),
    "sum_values": ("total up this list: {numbers}", {}),
    # MessageAPI
    "add_contact": ("add {user_name} as a contact", {}),
    "delete_message": ("delete the last message I sent to {receiver_id}", {}),
    "get_message_stats": ("give me some statistics on my messages", {}),
    "get_user_id": ("look up the user ID of {user}", {}),
    "list_users": ("tell me who all the users in the workspace are", {}),
    "message_get_login_status": ("check my login status for messaging", {}),
    "message_login": ("sign me in to the messaging application as {user_id}", {}),
    "search_messages": ("search my messages for {keyword}", {}),
    "send_message": ("send {message} to {receiver_id}", {}),
    "view_messages_sent": ("show me every message I have sent so far", {}),
    # TwitterAPI
    "authenticate_twitter": ("authenticate me on social media as {username}, using {password}", {}),
    "comment": ("reply under {tweet_id} with the comment {comment_content}", {}),
    "follow_user": ("follow {username_to_follow}", {}),
    "get_tweet": ("pull up {tweet_id}", {}),
    "get_tweet_comments": ("show me the comments under {tweet_id}", {}),
    "get_user_stats": ("show me the statistics for {username}", {}),
    "get_user_tweets": ("show me the tweets from {username}", {}),
    "list_all_following": ("tell me who I am following", {}),
    "mention": ("tag {mentioned_usernames} in {tweet_id} so they see it, a mention", {}),
    "post_tweet": ("post {content}", {"tags": "with the hashtags {tags}", "mentions": "mentioning {mentions}"}),
    "posting_get_login_status": ("check my login status on social media", {}),
    "retweet": ("retweet {tweet_id}", {}),
    "search_tweets": ("search the tweets for {keyword}", {}),
    "unfollow_user": ("unfollow {username_to_unfollow}", {}),
    # TicketAPI
    "close_ticket": ("close {ticket_id}", {}),
    "create_ticket": ("open a support ticket titled {title}",
                      {"description": "saying {description}", "priority": "with a priority level of {priority}"}),
    "edit_ticket": ("update {ticket_id}: {updates}", {}),
    "get_ticket": ("pull up {ticket_id}", {}),
    "get_user_tickets": ("show me all my tickets", {"status": "that are {status}"}),
    "logout": ("sign the current user out of the ticket system", {}),
    "resolve_ticket": ("resolve {ticket_id}", {"resolution": "noting {resolution}"}),
    "ticket_get_login_status": ("check my login status for the ticket system", {}),
    "ticket_login": ("authenticate me for the ticket system as {username}, using {password}", {}),
    # TradingBot
    "add_to_watchlist": ("put {stock} on my watchlist", {}),
    "cancel_order": ("cancel {order_id}", {}),
    "filter_stocks_by_price": ("filter {stocks} down to those priced from {min_price} to {max_price}", {}),
    "fund_account": ("put {amount} into my trading account", {}),
    "get_account_info": ("show me my account details", {}),
    "get_available_stocks": ("tell me which stock symbols are in {sector}", {}),
    "get_current_time": ("tell me what time it is right now", {}),
    "get_order_details": ("show me the details of {order_id}", {}),
    "get_order_history": ("show me my order history", {}),
    "get_stock_info": ("give me the details on {symbol}", {}),
    "get_symbol_by_name": ("find the ticker symbol for {name}", {}),
    "get_transaction_history": ("show me my transaction history", {"start_date": "from {start_date}",
                                                                    "end_date": "until {end_date}"}),
    "get_watchlist": ("show me what is on my watchlist", {}),
    "notify_price_change": ("tell me whether the price of {stocks} moved by more than {threshold} percent", {}),
    "place_order": ("place an order to {order_type} {amount} shares of {symbol} at {price} each", {}),
    "remove_stock_from_watchlist": ("take {symbol} off my watchlist", {}),
    "trading_get_login_status": ("check my login status for trading", {}),
    "trading_login": ("do my trading login as {username}, using {password}", {}),
    "trading_logout": ("sign me out of the trading platform", {}),
    "withdraw_funds": ("withdraw {amount} from my account", {}),
    # TravelAPI
    "authenticate_travel": ("authenticate me with the travel service as {user_first_name} {user_last_name}: "
                            "client {client_id}, secret {client_secret}, {refresh_token} to refresh it, "
                            "{grant_type} access", {}),
    "book_flight": ("book a {travel_class} flight from {travel_from} to {travel_to} on {travel_date}, "
                    "paid with {card_id}, signed in with {access_token}", {}),
    "cancel_booking": ("cancel {booking_id}, signed in with {access_token}", {}),
    "compute_exchange_rate": ("at today's exchange rate, tell me what {value} {base_currency} is in "
                              "{target_currency}", {}),
    "contact_customer_support": ("get customer support on {booking_id} and tell them {message}", {}),
    "get_all_credit_cards": ("show me all my registered cards", {}),
    "get_booking_history": ("show me my booking history, signed in with {access_token}", {}),
    "get_budget_fiscal_year": ("tell me the budget for this fiscal year",
                               {"lastModifiedAfter": "changed after {lastModifiedAfter}",
                                "includeRemoved": "(removed items: {includeRemoved})"}),
    "get_credit_card_balance": ("tell me the balance on {card_id}, signed in with {access_token}", {}),
    "get_flight_cost": ("tell me what a {travel_class} flight from {travel_from} to {travel_to} on {travel_date} "
                        "would cost", {}),
    "get_nearest_airport_by_city": ("find the airport closest to {location}", {}),
    "list_all_airports": ("tell me which airports I can fly from", {}),
    "purchase_insurance": ("buy {insurance_type} insurance for {booking_id} at {insurance_cost}, charged to {card_id}, "
                           "signed in with {access_token}", {}),
    "register_credit_card": ("register my card {card_number}, expiring {expiration_date}, in the name of "
                             "{cardholder_name}, security code {card_verification_number}, signed in with "
                             "{access_token}", {}),
    "retrieve_invoice": ("get me the invoice, signed in with {access_token}",
                         {"booking_id": "for {booking_id}", "insurance_id": "and {insurance_id}"}),
    "set_budget_limit": ("cap my travel budget at {budget_limit}, signed in with {access_token}", {}),
    "travel_get_login_status": ("check my login status for the travel service", {}),
    "verify_traveler_information": ("verify the traveler {first_name} {last_name}, born {date_of_birth}, "
                                    "passport {passport_number}", {}),
    # VehicleControlAPI
    "activateParkingBrake": ("{mode} the parking brake", {}),
    "adjustClimateControl": ("set the climate to {temperature} degrees",
                             {"unit": "{unit}", "fanSpeed": "with the fan at {fanSpeed}", "mode": "in {mode} mode"}),
    "check_tire_pressure": ("check my tire pressure", {}),
    "displayCarStatus": ("show me the car's {option} status", {}),
    "display_log": ("put {messages} up on the car's screen as log messages", {}),
    "estimate_distance": ("tell me the distance from {cityA} to {cityB}", {}),
    "estimate_drive_feasibility_by_mileage": (
        "tell me whether I can drive {distance} miles on what is in the tank", {}),
    "fillFuelTank": ("fill the tank with {fuelAmount} of fuel", {}),
    "find_nearest_tire_shop": ("find me the closest tire shop", {}),
    "gallon_to_liter": ("convert {gallon} from gallon to liter units", {}),
    "get_current_speed": ("tell me my current speed", {}),
    "get_outside_temperature_from_google": ("tell me the temperature outside", {}),
    "get_outside_temperature_from_weather_com": ("tell me the temperature outside", {}),
    "get_zipcode_based_on_city": ("find the zipcode for {city}", {}),
    "liter_to_gallon": ("convert {liter} from liter to gallon units", {}),
    "lockDoors": ("{unlock} the doors {door}", {}),
    "pressBrakePedal": ("press the brake pedal down to {pedalPosition}", {}),
    "releaseBrakePedal": ("let go of the brake pedal", {}),
    "setCruiseControl": ("{activate} cruise control at {speed} mph, keeping {distanceToNextVehicle} meters to the "
                         "car ahead", {}),
    "setHeadlights": ("turn the headlights {mode}", {}),
    "set_navigation": ("navigate me to {destination}", {}),
    "startEngine": ("start the engine in {ignitionMode} mode", {}),
}

#: How a user says some supplied values: "{v}" is the value as said, "{raw}" unquoted.
FORMS: dict[str, str] = {
    "folder": "the {v} folder", "tweet_id": "tweet {raw}", "ticket_id": "ticket {raw}", "order_id": "order {raw}",
    "booking_id": "booking {v}", "card_id": "card {v}", "access_token": "my token {v}", "sector": "the {raw} sector",
    "fuelAmount": "{raw} gallons", "order_type": "{raw_lower}", "mode": "{raw}", "option": "{raw}",
    "unit": "{raw}", "ignitionMode": "{raw}", "insurance_type": "{raw}", "travel_class": "{raw}",
    "unlock": "bool:unlock|lock", "activate": "bool:turn on|turn off", "grant_type": "{v}",
}

#: What an argument names, for "that file" (from an earlier result) and "some file" (left out).
NOUNS: dict[str, str] = {
    "file_name": "file", "file_name1": "file", "file_name2": "other file", "source": "file", "destination": "place",
    "folder": "folder", "dir_name": "folder", "path": "folder", "content": "text", "pattern": "phrase",
    "number": "number", "a": "number", "b": "other number", "value": "amount", "base": "base", "exponent": "exponent",
    "part": "part", "whole": "total", "numbers": "numbers", "precision": "precision", "decimal_places": "precision",
    "user_name": "person", "receiver_id": "person", "user": "person", "user_id": "user", "keyword": "word",
    "message": "message", "username": "account", "password": "password", "tweet_id": "tweet",
    "comment_content": "comment", "username_to_follow": "account", "username_to_unfollow": "account",
    "mentioned_usernames": "people", "ticket_id": "ticket", "title": "title", "resolution": "note",
    "stock": "stock", "symbol": "stock", "stocks": "stocks", "order_id": "order", "amount": "amount",
    "sector": "sector", "name": "company", "price": "price", "min_price": "lower price", "max_price": "upper price",
    "threshold": "threshold", "access_token": "token", "card_id": "card", "booking_id": "booking",
    "travel_from": "airport", "travel_to": "destination airport", "travel_date": "date", "location": "city",
    "budget_limit": "budget", "insurance_cost": "price", "cityA": "place", "cityB": "other place",
    "distance": "distance", "fuelAmount": "amount", "gallon": "amount", "liter": "amount", "city": "city",
    "speed": "speed", "temperature": "temperature", "destination_city": "city",
}


def say(value: Any) -> str:
    """A value as a user would type it: strings quoted, lists as "x, y and z"."""
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        items = [say(v) for v in value]
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else "none"
    if isinstance(value, dict):
        return ", ".join(f"its {k.replace('_', ' ')} set to {say(v)}" for k, v in value.items())
    return str(value)


def _supplied(param: str, value: Any, said: frozenset[str]) -> str:
    form = FORMS.get(param, "{v}")
    if form.startswith("bool:"):
        yes, no = form[5:].split("|")
        return yes if value else no
    text = form.format(v=say(value), raw=value, raw_lower=str(value).lower())
    if isinstance(value, str) and value in said and (form == "{v}" or form.startswith("the {v}")):
        return "the same " + text.removeprefix("the ")  # said in an earlier turn: refer back to it
    return text


def slot(param: str, value: Any, *, bound: set[str], missing: str | None, said: frozenset[str]) -> str:
    """One argument as said in the query (see the module docstring)."""
    noun = NOUNS.get(param, "one")
    if param == missing:
        return f"some {noun}"
    if param in bound:
        return f"that {noun}"
    if isinstance(value, list):
        parts = [f"that {noun}" if f"{param}[{i}]" in bound else _supplied(param, v, said)
                 for i, v in enumerate(value)]
        if not parts:
            return "none"
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return _supplied(param, value, said)


#: Words a tool's name starts with when it names an action ("cancel_order"); other names are things to
#: look up ("item_details" -> "look up the item details").
VERBS = frozenset("""get set list find search show view read open check look fetch create add make new insert put post
    write save store start stop begin end close finish delete remove drop clear cancel undo update
    edit change modify rename move copy replace reset send reply forward share publish tag label mark flag assign
    book reserve buy place pay charge refund return exchange transfer deposit withdraw restock ship deliver
    calculate compute count sum convert estimate compare sort filter rank apply submit approve reject confirm verify
    validate login logout sign register subscribe unsubscribe follow unfollow invite join leave enable disable turn
    lock unlock archive restore upload download export import schedule plan track notify think""".split())

#: Words too general to tell a user which tool a request is for.
_PLAIN = frozenset("""the and for with from into that this what which when each every some their there about
    above after before given other only also been have will would should could does made make using used more
    most than then them they these those your yours whose where just like must based returns return whether
    list item items value values name names current""".split())


def _words(name: str) -> list[str]:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ").lower().split()


def noun(param: str) -> str:
    """What an argument names, in a user's words: the table's noun, else its name without a trailing "id"."""
    if param in NOUNS:
        return NOUNS[param]
    words = [w for w in _words(param) if w not in ("id", "ids")] or _words(param) or ["one"]
    return " ".join(words)


def _is_id(param: str) -> bool:
    words = _words(param)
    return len(words) >= 2 and words[-1] in ("id", "ids", "number", "code", "key")


def _said(param: str, value: Any, said: frozenset[str]) -> str:
    """A supplied value with what it is: "order 'o1001'" for ids, "'spring' as the tag" otherwise."""
    text = say(value)
    again = isinstance(value, str) and value in said  # said in an earlier turn: refer back to it
    if isinstance(value, bool):
        return f"{noun(param)} {'on' if value else 'off'}"
    if _is_id(param) and not isinstance(value, list):
        return f"{'the same ' if again else ''}{noun(param)} {text}"
    return f"{'the same ' if again else ''}{text} as the {noun(param)}"


def generic_outcome(function: str, arguments: dict[str, Any], *, description: str = "", params: Iterable[str] = (),
                    bound: Iterable[str] = (), missing: str | None = None, said: Iterable[str] = ()) -> str:
    """A person's request for any tool, from its name, description and arguments (never its parameter names
    next to their values, nor its description's wording: `rods.synth.leak`).

    The name gives the verb and object ("get_user_details" -> "get the user details"); a one-word name
    reads "take care of the balance". When neither the name nor a supplied value shares a content word with
    the description, one of its words is added ("..., about the money"), so the request still says what it
    is for (the judge's intent check).
    """
    words = _words(function) or [function.lower()]
    if len(words) >= 2 and words[0] in VERBS:
        article = "" if words[1] in ("to", "from", "by", "for", "with", "of", "on", "in", "into", "a", "the", "all",
                                     "my") else "the "
        head = f"{words[0]} {article}{' '.join(words[1:])}"
    elif words[0] in VERBS:
        head = f"take care of the {words[0]}"
    else:
        head = f"look up the {' '.join(words)}"
    bound_set, said_set = set(bound), frozenset(said)
    order = [p for p in params if p in arguments] + [p for p in arguments if p not in params]
    parts = []
    for param in order:
        value = arguments[param]
        if value in (None, "") or (param not in bound_set and param != missing and not _required_like(value)):
            continue
        if param == missing:
            parts.append(f"some {noun(param)}")
        elif param in bound_set:
            parts.append(f"that {noun(param)}")
        elif isinstance(value, list) and any(f"{param}[{i}]" in bound_set for i in range(len(value))):
            items = [f"that {noun(param)}" if f"{param}[{i}]" in bound_set else say(v) for i, v in enumerate(value)]
            parts.append(", ".join(items))
        else:
            parts.append(_said(param, value, said_set))
    text = head + (" for " + parts[0] if parts else "")
    if len(parts) > 1:
        text += ", with " + " and ".join(parts[1:])
    mine = {w for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in _PLAIN}
    described = [w for w in re.findall(r"[a-z]{4,}", description.lower()) if w not in _PLAIN]
    supplied = [p for p in order if p not in bound_set and p != missing and arguments[p] not in (None, "")]
    if described and not supplied and not {w.rstrip("s")[:5] for w in mine} & {w.rstrip("s")[:5] for w in described}:
        text += f", about the {described[0]}"
    return text


def _required_like(value: Any) -> bool:
    """Whether an argument is worth saying (a value, not an empty container)."""
    return not (isinstance(value, (list, dict)) and not value)


def outcome(function: str, arguments: dict[str, Any], *, params: Iterable[str] = (), bound: Iterable[str] = (),
            missing: str | None = None, said: Iterable[str] = (), description: str = "", generic: bool = False) -> str:
    """One call as the outcome a person asks for.

    Args:
        function: the function called.
        arguments: its keyword arguments (positional ones already named by `params` order).
        params: the function's parameters in doc order (for arguments the phrase has no slot for).
        bound: arguments (or `name[i]` list items) the model must take from earlier results.
        missing: the argument a miss_param turn leaves out.
        said: string values the user said in earlier turns (referred back to as "the same ...").
        description: the function's description (for a function without a phrase in `OUTCOMES`).
        generic: a tool of a non-BFCL environment (its name may be a BFCL function's: the table is not for it).
    """
    if function not in OUTCOMES or generic:
        return generic_outcome(function, arguments, description=description, params=params, bound=bound,
                               missing=missing, said=said)
    main, optional = OUTCOMES[function]
    bound_set, said_set = set(bound), frozenset(said)

    def fill(template: str) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: slot(m.group(1), arguments.get(m.group(1)), bound=bound_set,
                                                   missing=missing, said=said_set), template)

    used = set(re.findall(r"\{(\w+)\}", main))
    text = fill(main)
    for param, segment in optional.items():
        used.add(param)
        if param not in arguments or arguments[param] in (None, ""):
            continue
        value = arguments[param]
        if param in bound_set or param == missing:  # never the value itself: "that file", "some file"
            piece = "with " + slot(param, value, bound=bound_set, missing=missing, said=said_set) \
                if not isinstance(segment, str) else fill(segment)
        elif isinstance(segment, tuple):  # a boolean: (said when true, said when false)
            piece = segment[0] if value else segment[1]
        elif isinstance(segment, dict):  # a code the user says in words ("w" -> "word by word")
            piece = segment.get(value) or say(value)
        else:
            piece = fill(segment)
        if piece:
            text += " " + piece
    extra = [k for k in arguments if k not in used and arguments[k] not in (None, "")]
    if extra:  # arguments the phrase has no slot for (unknown functions): their values, never their names
        text += " using " + " and ".join(slot(k, arguments[k], bound=bound_set, missing=missing, said=said_set)
                                         for k in extra)
    return text


def named_arguments(arguments: dict[str, Any], args: Iterable[Any], params: list[str]) -> tuple[dict[str, Any], dict]:
    """Positional arguments named by the doc's parameter order; `#i` bindings renamed to match."""
    named = dict(arguments)
    rename = {}
    for i, value in enumerate(args):
        name = params[i] if i < len(params) else f"arg{i}"
        named.setdefault(name, value)
        rename[f"#{i}"] = name
    return named, rename

