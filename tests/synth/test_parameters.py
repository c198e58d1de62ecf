"""What a parameter's name and spec say it asks for (rods.synth.parameters)."""

from rods.synth.parameters import described_as, enum_values, is_count, name_words, names_a_new_thing, tokens


def test_an_integer_that_counts_things_is_a_few():
    assert is_count("total_baggages") and is_count("quantity") and is_count("nights") and is_count("numberOfSeats")
    assert not is_count("amount") and not is_count("status") and not is_count("radius") and not is_count("price")


def test_enums_and_names():
    assert enum_values({"type": "string", "description": 'Door. [Enum]: ["driver", "passenger"]'}) == ["driver",
                                                                                                      "passenger"]
    assert tokens("fuelAmount") == {"fuel", "amount"} and tokens("order_ids") == {"order", "id"}
    assert name_words("total_baggages") == ["total", "baggages"] and name_words("orders/12#key") == ["orders", "key"]


def test_the_description_says_a_file_or_a_zipcode_where_the_name_says_a_place():
    assert described_as({"description": "The zipcode of the first city."}) == "zipcode"
    assert described_as({"description": "The destination name to copy the file or directory to."}) == "path"
    assert described_as({"description": "The name of the city."}) is None
    assert described_as({}) is None


def test_a_parameter_that_names_what_its_call_creates():
    assert names_a_new_thing("file_name", {"description": "The name of the new file in the current directory."})
    assert names_a_new_thing("new_name", {}) and names_a_new_thing("newTitle", {"description": "A title."})
    assert not names_a_new_thing("file_name", {"description": "The name of the file to read."})
    assert not names_a_new_thing("renewal_date", {}) and not names_a_new_thing("name", {})
