"""How a person asks for what BFCL's functions achieve: the BFCL domain's phrase hints.

A user asks for outcomes ("show me the end of 'log.txt'"), not for functions
("display the last part of a file with file name 'log.txt'"). `OUTCOMES` holds
one outcome phrase per function of the eight classes: `{param}` slots stand
for the call's arguments; optional arguments add a segment only when the call
has them (a boolean segment is a pair: said when true, said when false; a
code's segment maps each code to words, "*" any other value; a code with a
slot in the outcome itself is said there, "" giving the words when the call
does not pass it). `FORMS` says how some supplied values
are said, `NOUNS` what an argument names ("that file", "some file"),
`SUBJECTS` what each class is about. `rods.llm.outcomes` fills them in.

Phrases avoid the doc's wording and never recite a parameter name next to its
value, so they pass `rods.synth.leak.leaks`; each keeps one content word of the
description, so the judge can still see which call a query asks for.
"""

from __future__ import annotations

from typing import Any

#: What each API class is about, in the user's words.
SUBJECTS = {
    "GorillaFileSystem": "my project files",
    "MathAPI": "a few calculations",
    "MessageAPI": "messages with my colleagues",
    "TwitterAPI": "my social media account",
    "TicketAPI": "a support ticket",
    "TradingBot": "my trading account",
    "TravelAPI": "an upcoming trip",
    "VehicleControlAPI": "my car",
}

#: function -> (outcome with slots for the required parameters, {optional parameter: segment}).
OUTCOMES: dict[str, tuple[str, dict[str, Any]]] = {
    # GorillaFileSystem
    "cat": ("show me the contents of {file_name}", {}),
    "cd": ("go into {folder}", {}),
    "cp": ("copy {source} to {destination}", {}),
    "diff": ("compare {file_name1} with {file_name2} and tell me what differs", {}),
    "du": ("tell me how much disk space everything here takes", {"human_readable": ("in a readable format", "")}),
    "echo": ("write {content}", {"file_name": "into {file_name}"}),
    "find": ("find every file and folder", {"name": "with {name} in its name", "path": "under {path}"}),
    "grep": ("search {file_name} for the lines that mention {pattern}", {}),
    "ls": ("show me the contents of this folder", {"a": ("including hidden files", "")}),
    "mkdir": ("create a folder called {dir_name}", {}),
    "mv": ("move {source} to {destination}", {}),
    "pwd": ("tell me which directory I am in right now", {}),
    "rm": ("remove {file_name} for good", {}),
    "rmdir": ("remove the empty folder called {dir_name}", {}),
    "sort": ("sort {file_name} alphabetically", {}),
    "tail": ("show me the end of {file_name}", {"lines": {"1": "(just the final line)",
                                                          "*": "(just the final {lines} lines)"}}),
    "touch": ("create an empty file called {file_name}", {}),
    "wc": ("tell me how many {mode} there are in {file_name}",
           {"mode": {"l": "lines", "w": "words", "c": "characters", "": "lines"}}),
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
    "file_name": "file", "file_name1": "file", "file_name2": "other file", "source": "file",
    "destination": "destination",
    "folder": "folder", "dir_name": "folder", "path": "folder", "content": "text", "pattern": "phrase",
    "number": "number", "a": "number", "b": "other number", "value": "amount", "base": "base", "exponent": "exponent",
    "part": "part", "whole": "total", "numbers": "numbers", "precision": "precision", "decimal_places": "precision",
    "user_name": "person", "receiver_id": "person", "user": "person", "user_id": "user", "keyword": "word",
    "message": "message", "username": "account", "password": "password", "tweet_id": "tweet",
    "comment_content": "comment", "username_to_follow": "account", "username_to_unfollow": "account",
    "mentioned_usernames": "people", "mentions": "people", "tags": "hashtags",
    "ticket_id": "ticket", "title": "title", "resolution": "note",
    "stock": "stock", "symbol": "stock", "stocks": "stocks", "order_id": "order", "amount": "amount",
    "sector": "sector", "name": "company", "price": "price", "min_price": "lower price", "max_price": "upper price",
    "threshold": "threshold", "access_token": "token", "card_id": "card", "booking_id": "booking",
    "travel_from": "airport", "travel_to": "destination airport", "travel_date": "date", "location": "city",
    "budget_limit": "budget", "insurance_cost": "price", "cityA": "place", "cityB": "other place",
    "distance": "distance", "fuelAmount": "amount", "gallon": "amount", "liter": "amount", "city": "city",
    "speed": "speed", "temperature": "temperature", "destination_city": "city",
}
