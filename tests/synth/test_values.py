"""New content: one consistent, seeded remapping; what counts as a copied value."""

import random
import re

from rods.envs.vocabulary import NOUNS
from rods.synth.api_graph import reference_graph
from rods.synth.people import first_names, is_person_name
from rods.synth.value_kinds import is_distinctive, is_filler, is_kept_word, is_prose, leaves, vocabulary_of
from rods.synth.values import ValueRemapper

BFCL_WORDS = vocabulary_of("bfcl")


def test_distinctive_is_defined_precisely():
    # not distinctive: booleans, None, small integers, environment vocabulary, stopwords, extensions, short words
    for value in (True, False, None, 0, 7, -10, 3.0, "AAPL", "SFO", "driver", "Open", "buy", "..", ".", "md",
                  "the", "txt", "celsius", "San Francisco", "94016"):
        assert not is_distinctive(value, BFCL_WORDS), value
    # distinctive: other words, digit runs of 3+, other numbers
    for value in ("report_draft.txt", "Simona", "hello world", "USR9731", 11, -42, 0.5, 227.16, "2024-11-15"):
        assert is_distinctive(value, BFCL_WORDS), value


def test_vocabulary_comes_from_the_simulators():
    vocab = BFCL_WORDS
    assert {"aapl", "sfo", "driver", "economy", "buy"} <= vocab
    assert "simona" not in vocab and "proposal" not in vocab


def test_remapping_is_consistent_and_keeps_shape():
    seed = {"root": {"alex": {"type": "directory", "contents": {
        "proposal.docx": {"type": "file", "content": "Proposal for alex, due 2024."}}}}}
    r = ValueRemapper(random.Random(0), BFCL_WORDS, leaves(seed))
    new = r.remap(seed)
    (user,) = new["root"]
    assert user != "alex" and new["root"][user]["type"] == "directory"
    (fname,) = new["root"][user]["contents"]
    assert fname.endswith(".docx") and fname != "proposal.docx"
    content = new["root"][user]["contents"][fname]["content"]
    # the same word maps to the same new word everywhere, capitalisation kept
    assert r.text("alex") == user
    assert r.text("proposal.docx") == fname
    assert content.startswith(r.text("Proposal")) and r.text("Proposal")[0].isupper()
    assert "2024" not in content
    # numbers: distinctive ones move (consistently), small ones stay
    assert r.number(227.16) == r.number(227.16) != 227.16
    assert r.number(5) == 5 and r.number(True) is True


def test_remapping_never_reuses_seed_values_and_is_seeded():
    seed = ["zebra.txt", "beta", "gamma delta", 1234, 56.78, "Simona", "USR001"]
    a = ValueRemapper(random.Random(1), BFCL_WORDS, seed)
    b = ValueRemapper(random.Random(1), BFCL_WORDS, seed)
    new_a = [a.remap(v) for v in seed]
    assert new_a == [b.remap(v) for v in seed]
    for old, new in zip(seed, new_a):
        if is_distinctive(old, BFCL_WORDS):
            assert new != old
    seed_words = {w.lower() for v in seed if isinstance(v, str) for w in v.replace(".", " ").split()
                  if not is_kept_word(w, BFCL_WORDS)}
    for old, new in zip(seed, new_a):
        if isinstance(new, str) and is_distinctive(old, BFCL_WORDS):
            assert not ({w.lower() for w in new.replace(".", " ").split()} & seed_words), new
    assert a.remap("USR001") == "USR001"  # the simulator's own user id: kept
    assert is_kept_word("txt", BFCL_WORDS) and not is_kept_word("gamma", BFCL_WORDS)


def test_prose_is_told_from_names_titles_and_code():
    for text in ("Sample content of file1", "This is a hidden file.", "Meeting at 3 PM", "Thanks for the update!",
                 "Front left: 28.0, Front right: 28.0"):
        assert is_prose(text), text
    for text in ("SELECT name FROM products", "Hana Sato", "The Kayak Paddle", "a/b/c d e", "x = y + z",
                 "4938 5639 9827 6789", "hello world", "one line\nand another", 42,
                 "aX9#mK2$pL5", "Tr@v3lB00ks2023"):  # passwords: letters between digits are no words
        assert not is_prose(text), text


def test_a_sentence_becomes_a_sentence_people_wrote_consistently():
    """A sentence of the seed is not re-drawn word by word (word salad): it becomes one of the environment's
    written sentences (its own class's first), the same one wherever it appears, sharing no distinctive word
    with the seed; a title and a name keep their word-by-word mapping; with no sentences left, word by word."""
    seed = {"files": {"a.txt": "Draft summary of the research project.", "b.txt": "Sample content of file1",
                      "c.txt": "Draft summary of the research project."},
            "title": "The Kayak Paddle"}
    prose = {"FS": ["Meeting moved to Thursday.", "Draft notes for the research review.", "Bring the maps please."],
             "Chat": ["Heading to the airport now."]}
    for k in range(10):
        r = ValueRemapper(random.Random(k), BFCL_WORDS, leaves(seed), prose=prose)
        new = r.remap(seed, "FS")
        files = new["files"]
        texts = list(files.values())
        assert texts[0] == texts[2] != texts[1]  # equal stays equal, different stays different
        assert set(texts) <= {"Meeting moved to Thursday.", "Bring the maps please."}  # "research" is the seed's
        assert r.text("Sample content of file1") == texts[1]  # the same mapping for an argument
        assert new["title"] != seed["title"] and len(new["title"].split()) == 3  # a title: word by word
        assert r.sentence("FS") == "Heading to the airport now."  # its class's used up: another class's
        assert r.sentence("FS") is None and r.sentence() is None
        worded = r.text("Another fine sentence here")
        assert worded != "Another fine sentence here" and len(worded.split()) == 4  # none left: word by word


def test_a_phrase_under_a_field_becomes_one_people_wrote_there():
    """'Banana Grape Lemon' as a file's text becomes another file's text, a ticket's title another title (never
    'Glade Apple Bucket'); with none left under that field, word by word; a person's name keeps its role."""
    seed = {"files": {"a.txt": {"content": "Banana Grape Lemon"}, "b.txt": {"content": "Rain data 1"}},
            "tickets": [{"title": "Billing Concern", "owner": "Hana Sato"}]}
    field_texts = {"FS/content": ["Meeting at 3 PM", "Old draft content.", "Banana Split Cake"],
                   "FS/title": ["Feature Request"]}
    for k in range(10):
        r = ValueRemapper(random.Random(k), BFCL_WORDS, leaves(seed), field_texts=field_texts)
        new = r.remap(seed, "FS")
        contents = {f["content"] for f in new["files"].values()}
        assert contents == {"Meeting at 3 PM", "Old draft content."}  # "Banana Split Cake" shares "Banana"
        (ticket,) = new["tickets"]
        assert ticket["title"] == "Feature Request" and ticket["owner"] != "Hana Sato"
        assert len(ticket["owner"].split()) == 2 and ticket["owner"] not in field_texts["FS/content"]
        assert r.text("Banana Grape Lemon") in contents  # the same mapping for an argument
        again = ValueRemapper(random.Random(k), BFCL_WORDS, leaves(seed), field_texts={}).remap(seed, "FS")
        assert len(again["files"][next(iter(again["files"]))]["content"].split()) == 3  # none known: word by word


def test_fresh_numbers_never_run_out():
    """A seed that uses up 11..499 still gets fresh, distinct numbers (no internal error)."""
    r = ValueRemapper(random.Random(0), BFCL_WORDS, list(range(11, 495)))
    drawn = [r.fresh_number() for _ in range(40)]
    assert len(set(drawn)) == 40
    assert not set(drawn) & set(range(11, 495))


def test_state_keys_are_not_values():
    """A variant's state has its seed's shape: attributes and record fields stay, map keys and data keys change."""
    seed = {
        "books": {"bk-201": {"title": "Salt Road", "author": "Ines Moreau", "copies": 2, "shelfCode": "Q7"},
                  "bk-202": {"title": "Tidal Clocks", "author": "Kofi Mensah", "copies": 1, "shelfCode": "R2"}},
        "user_map": {"Michael": "USR901", "Sarah": "USR902"},
        "orders": {"12345": {"symbol": "ZQX", "num_shares": 10}, "order_type": "Buy"},
        "next_member_number": 317,
    }
    for k in range(10):
        new = ValueRemapper(random.Random(k), frozenset(), leaves(seed)).remap(seed)
        assert set(new) == set(seed)  # the class's attributes
        assert set(new["books"]).isdisjoint(seed["books"])  # ids of a map: re-drawn
        assert all(set(book) == {"title", "author", "copies", "shelfCode"} for book in new["books"].values())
        assert all(isinstance(book["copies"], int) for book in new["books"].values())
        assert set(new["user_map"]).isdisjoint({"Michael", "Sarah"})  # names as keys are data
        assert "12345" not in new["orders"] and "order_type" in new["orders"]
        (order,) = [v for v in new["orders"].values() if isinstance(v, dict)]
        assert set(order) == {"symbol", "num_shares"}


def test_a_handle_becomes_another_persons_handle_and_fresh_words_name_things_people_keep():
    """'@Julia' mentioned in a post is a person: another first name, not a fresh noun ('@Comet' beside the
    hashtag '#Comet' in the eleventh blind read); fresh names are things people keep files about, not the
    nature words ('yarrow.log', 'elm_cider') the twelfth reader failed as random."""
    remapper = ValueRemapper(random.Random(3), BFCL_WORDS)
    new = remapper.remap({"mentions": ["@Julia"], "tags": ["#currenttechtrend"], "author": "@Julia"})
    first = new["mentions"][0]
    assert first.startswith("@") and first[1:] in first_names() and new["author"] == first, new
    assert new["tags"][0][1:] in NOUNS and new["tags"][0] != first.replace("@", "#")
    # a team's camel-case handle is a person's handle too, not the word of the hashtag beside it (BFCL's seed
    # state mentions '@InsightfulTeam' beside '#InsightfulTeam': variants mentioned '@Exports' beside '#Exports')
    team = ValueRemapper(random.Random(3), BFCL_WORDS).remap(
        {"tags": ["#TechTrends", "#InsightfulTeam"], "mentions": ["@InsightfulTeam"]})
    assert team["mentions"][0][1:] in first_names() and team["mentions"][0][1:] != team["tags"][1][1:], team
    assert not {"yarrow", "anchor", "quartz", "galaxy"} & set(NOUNS) and len(NOUNS) >= 150


def test_texts_test_data_holds_about_itself_are_no_texts_a_variant_draws():
    """'This is a hidden file.' written into a roadmap log, 'Sample content of file1' into a csv: the fourteenth
    blind reader failed both as placeholders. They stay prose (a seed's own text is replaced whole), but the
    environment's pool of texts people wrote holds none of them."""
    for text in ("This is a hidden file.", "Sample content of file1", "Lorem ipsum dolor sit amet, consectetur.",
                 "This is a test document."):
        assert is_prose(text) and is_filler(text), text
    for text in ("Meeting highlights and notes.", "Q1: $5000, Q2: $7000, Q3: $6000, Q4: $8000",
                 "Initial outline of the Dylan project."):
        assert not is_filler(text), text
    graph = reference_graph("bfcl")
    pooled = [t for texts in graph.prose.values() for t in texts]
    assert len(pooled) >= 100 and not any(is_filler(t) for t in pooled)


def test_a_name_of_several_words_becomes_a_name_of_one_new_word_and_different_names_stay_different():
    """'research_notes.txt' -> 'assignments.txt', not 'assignments_weddings.txt' (a mash-up of two drawn words
    that three blind readers failed); over the names of every BFCL train seed's file system."""
    from rods.tasks.bfcl import load_split
    checked = 0
    for seed in load_split("train"):
        config = seed.initial_config.get("GorillaFileSystem")
        if not config:
            continue
        names = sorted({k for k in leaves(config) if isinstance(k, str) and re.fullmatch(r"[\w.-]+", k)})
        r = ValueRemapper(random.Random(7), BFCL_WORDS, leaves(seed.initial_config))
        new = {name: r.text(name) for name in names}
        assert len(set(new.values())) == len(new), seed.id  # different names stay different
        for name, made in new.items():
            stem = re.sub(r"\.\w{1,5}$", "", name)
            words = [w for w in re.split(r"[_-]", stem) if w]
            if len(words) >= 2 and sum(not is_kept_word(w, BFCL_WORDS) for w in words) >= 2 \
                    and re.fullmatch(r"[A-Za-z_-]+", stem):
                drawn = [w for w in re.split(r"[_.-]", made) if not is_kept_word(w, BFCL_WORDS)]
                assert len(drawn) == 1 and made.endswith(name[len(stem):]), (name, made)
                checked += 1
    assert checked >= 10


def test_a_title_or_place_with_no_other_left_is_made_of_its_fields_own_words():
    """Issue 39's reads: with every text under a field the seed's own, names were re-drawn word by word ('Rentals
    scans transcripts'). One word before the head noun is taken from another phrase of the field instead."""
    names = ["Market Square", "Canal Street", "Riverside Park North", "University Library"]
    seed = {"stations": {f"S{i}": {"name": name} for i, name in enumerate(names)}}  # one state holds them all
    for k in range(10):
        r = ValueRemapper(random.Random(k), BFCL_WORDS, leaves(seed), field_texts={"Bikes/name": names})
        new = [s["name"] for s in r.remap(seed, "Bikes")["stations"].values()]
        assert not set(new) & set(names) and len(set(new)) == 4, new  # new names, none a seed's
        for old, made in zip(names, new):
            assert made.split()[-1] == old.split()[-1]  # a square stays a square
            assert set(made.split()) <= {w for n in names for w in n.split()}, made  # in the field's own words


def test_a_quantity_stays_in_the_range_its_seeds_show():
    from rods.synth.values import within

    assert within(119, 5, 100) == 81 and within(2, 5, 100) == 8 and within(50, 5, 100) == 50
    assert within(430, 5, 100) == 5 and isinstance(within(119, 5, 100), int)
    assert within(101.5, 0.0, 100.0) == 98.5


def test_a_name_keeps_the_word_its_record_says_elsewhere_and_a_code_keeps_its_shape():
    """The car-rental read: 'Hartford Logan Airport' in Boston (a city swapped into a branch's name), and the
    branch 'BOS-LOGAN' re-keyed as 'Mab'."""
    branches = {"BOS-LOGAN": {"name": "Boston Logan Airport", "city": "Boston"},
                "BOS-BACKBAY": {"name": "Boston Back Bay", "city": "Boston"},
                "PVD-DOWNTOWN": {"name": "Providence Downtown Plaza", "city": "Providence"},
                "HFD-UNION": {"name": "Hartford Union Station", "city": "Hartford"}}
    seed = {"branches": branches}
    names = [b["name"] for b in branches.values()]
    for k in range(10):
        r = ValueRemapper(random.Random(k), BFCL_WORDS, leaves(seed), field_texts={"Cars/name": names})
        new = r.remap(seed, "Cars")["branches"]
        for (key, branch), old in zip(new.items(), branches.values()):
            assert branch["name"].split()[0] == old["city"], branch  # the word its record says elsewhere stays
            assert branch["name"] not in names and re.fullmatch(r"[A-Z]+-[A-Z]+", key), (key, branch)


def test_a_recast_s_numbers_stay_apart_and_its_small_counts_stay():
    """The BFCL read: two budgets of the seed both rounded to 20,000 (the user asked for the limit already set);
    the print-shop read: "double-sided" (sides=2) drawn as 1."""
    import random

    from rods.synth.value_model import Slot

    for seed in range(40):
        remapper = ValueRemapper(random.Random(seed), frozenset(), avoid=[18000, 20000, 25000])
        remapper.like_seed = True
        new = [remapper.number(v) for v in (18000, 20000, 25000)]
        assert len(set(new)) == 3 and not set(new) & {18000, 20000, 25000}, new
        assert remapper._by_slot(Slot("quantity", low=1, high=2), 2, None) == 2


def test_a_recast_s_address_gets_new_numbers_and_keeps_its_words():
    """The animal-shelter read: a new applicant's "14 Larch Street" came back as "14 Quizzes Events"."""
    import random

    remapper = ValueRemapper(random.Random(1), frozenset(), avoid=["14 Larch Street"])
    remapper.touched = frozenset(["14 Larch Street"])
    new = remapper.text("14 Larch Street")
    assert re.fullmatch(r"[1-9]\d Larch Street", new) and new != "14 Larch Street", new
    assert remapper.text("14 Larch Street") == new  # the same address the same everywhere


def test_a_recast_s_ids_and_codes_keep_their_letters_and_take_new_numbers():
    """The BFCL read: a card 'crd6789' came back as 'prototypes9167', a booking 'booking_001' as 'website_001'. A
    recast's own value keeps its words and takes new numbers (one or two digits of an id stay: seat 'C4'); a
    person's name in it is a person's."""
    import random

    values = ["crd6789", "booking_001", "C4", "report_2024.txt", "Goran Petrovic", "test_image1.jpg"]
    remapper = ValueRemapper(random.Random(1), frozenset(), avoid=values)
    remapper.touched = frozenset(values)
    card, booking, seat, report, person = (remapper.text(v) for v in values[:5])
    assert re.fullmatch(r"crd\d{4}", card) and card != "crd6789", card
    assert re.fullmatch(r"booking_\d{3}", booking) and booking != "booking_001", booking
    assert seat == "C4"
    image = remapper.text("test_image1.jpg")  # nothing else would change: the short run too (else a copy)
    assert re.fullmatch(r"test_image\d\.jpg", image) and image != "test_image1.jpg", image
    assert report in ("report_2023.txt", "report_2025.txt"), report  # its only number: a year on, or back
    assert is_person_name(person) and person != "Goran Petrovic", person
    # the first digit of a longer run stays: no area code 114 (the self-storage read), unit B-207 stays on floor 2
    for value in ("503-555-0142", "B-207"):
        for remap in (remapper, ValueRemapper(random.Random(2), frozenset(), avoid=[value])):
            remap.touched = frozenset([value]) if remap is remapper else None
            new = remap.text(value)
            assert new != value and [r[0] for r in re.findall(r"\d+", new)] == [r[0] for r in re.findall(r"\d+", value)]


def test_a_couple_is_two_first_names_and_one_family_name():
    """The permit-office read: "Tomasz and Ewa Novak" came back with a family name for Ewa ('Capuana Tron')."""
    import random

    remapper = ValueRemapper(random.Random(1), frozenset())
    new = remapper.person("Tomasz and Ewa Novak").split()
    assert len(new) == 4 and new[1] == "and" and new[0] in first_names() and new[2] in first_names(), new
    assert remapper.person("Ewa Novak") == f"{new[2]} {new[3]}"  # the same people alone


def test_a_recast_keeps_a_first_name_whose_gender_nothing_tells():
    """The permit-office read: "Kwame Mensah just called. ... he wants" (the pronoun a sentence later) became
    "Sanaya Grewal ... he". Where neither the name lists nor the seed's words tell a gender, the first name stays
    and the family name makes someone else; a told gender gets a name of that gender."""
    import random

    from rods.synth.people import gender_of

    remapper = ValueRemapper(random.Random(1), frozenset())
    remapper.like_seed = True
    remapper.genders = {"Robin": "female"}
    kwame = remapper.person("Kwame Mensah")
    assert kwame.split()[0] == "Kwame" and kwame != "Kwame Mensah"
    assert gender_of(remapper.person("Robin Ashworth").split()[0]) == "female"
    assert gender_of(remapper.person("Margaret Ashworth").split()[0]) == "female"


def test_a_re_drawn_key_is_no_key_the_seed_holds_and_two_records_never_merge():
    """The allotment society's read: member 'M-0131', touched by the words, came out as 'M-0143', Tom Hebden's key,
    and one member overwrote the other; a state full of years (members joined 1987 to 2022) ran out of years to
    draw and raised."""
    import random

    import pytest

    from rods.synth.values import MergedRecords

    members = {f"M-01{n}": {"name": f"Member {n}", "joined": str(1985 + int(n))} for n in range(10, 45)}
    for seed in range(20):
        remapper = ValueRemapper(random.Random(seed), frozenset(), avoid=leaves(members))
        remapper.like_seed, remapper.touched = True, frozenset({"M-0131"})
        new = remapper.remap({"members": members})
        assert len(new["members"]) == len(members)
        assert remapper.text("M-0131") not in members
        for _ in range(30):  # more years than 2024-2035 hold
            ValueRemapper._fresh_year(remapper)
    remapper = ValueRemapper(random.Random(0), frozenset())
    remapper.texts["K-1"] = "K-2"  # as if drawn for another record
    with pytest.raises(MergedRecords):
        remapper.remap({"records": {"K-1": {"a": 1}, "K-2": {"a": 2}}})


def test_a_numbered_record_re_drawn_stays_among_its_neighbours():
    """Two held-out reads noted ids re-drawn at random beside their series: 'INV-0430' among INV-0401 to INV-0413,
    'FX-178' among the FX-10x. A re-drawn key of a numbered series takes a number the series leaves free, or the
    next after it."""
    from rods.synth.value_kinds import numbered_series

    invoices = {f"INV-04{n:02d}": {"amount": 52.0} for n in range(1, 14)}
    members = {"M-0101": {}, "M-0104": {}, "M-0109": {}, "M-0112": {}}
    state = {"invoices": invoices, "members": members, "misc": {"A-1": {}}}
    assert numbered_series(state)["0406"] == (frozenset(range(401, 414)), 4) and "1" not in numbered_series(state)
    for seed in range(10):
        remapper = ValueRemapper(random.Random(seed), frozenset(), avoid=leaves(state))
        remapper.like_seed, remapper.touched = True, frozenset({"INV-0406", "M-0104"})
        remapper.remap(state)
        assert remapper.text("INV-0406") == "INV-0414"  # no gap: the next
        assert remapper.text("M-0104") in {f"M-01{n:02d}" for n in (2, 3, 5, 6, 7, 8, 10, 11)}  # a gap
