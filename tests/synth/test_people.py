"""Names of people and companies (rods.synth.people): a person is named as a person, never with nouns."""

from __future__ import annotations

import random

from rods.synth.people import (
    follow_renames,
    gender_of,
    is_person_name,
    locale_of_first,
    people_pools,
    plain,
    said_gender,
)
from rods.synth.values import ValueRemapper


def test_person_names_are_names_and_nouns_are_not():
    assert is_person_name("Amelia Kowalski") and is_person_name("Luis Fernández", known={"Luis Fernández"})
    assert not is_person_name("Newsletters Quotes") and not is_person_name("Appendix Lectures")
    assert not is_person_name("locked") and not is_person_name("Backlog")


def test_a_title_before_a_name_is_no_part_of_it():
    from rods.synth.people import titled

    assert titled("Dr. Ana Reyes") == ("Dr.", "Ana Reyes") and titled("Ana Reyes") == ("", "Ana Reyes")
    assert is_person_name("Dr. Ana Reyes") and is_person_name("Ms. Grace Adeyemi")
    assert not is_person_name("Dr. Backlog Outlines")  # a title does not make nouns a person


def test_every_country_names_people_with_many_names_of_its_own():
    """The box-office read: every Polish guest was a 'Doe' (Faker's pl_PL keeps family names under
    `unisex_last_names`; its `last_names` is the base provider's placeholder). Then Polish people were named by
    nobody, and a boy Kacper kept his first name, as no list gave its gender, beside a Japanese family name."""
    from rods.synth.people import MIN_NAMES, people_pools

    pools = people_pools()
    assert len(pools) >= 10 and "pl_PL" in pools and gender_of("Kacper") == "male"
    for locale, (firsts, lasts) in pools.items():
        assert len(firsts) >= MIN_NAMES and len(lasts) >= MIN_NAMES, locale
        assert lasts != ("Doe",), locale


def test_what_is_made_of_a_renamed_persons_name_is_renamed_with_it():
    """The print-shop read: 'Robert Boucher' of 'Webb & Sons Roofing' wrote as marcus@webbroofing.com, 'Monis Sezer'
    as tlindqvist@fastmail.com."""
    from rods.synth.people import follow_renames

    people = {"Marcus Webb": "Robert Boucher", "Tom Lindqvist": "Anders Berg", "Rose Park": "Ines Costa"}
    assert follow_renames("Webb & Sons Roofing", people) == "Boucher & Sons Roofing"
    assert follow_renames("marcus@webbroofing.com", people) == "robert@boucherroofing.com"
    assert follow_renames("tlindqvist@fastmail.com", people) == "aberg@fastmail.com"
    assert follow_renames("marcus.webb", people) == "robert.boucher" and follow_renames("mwebb", people) == "rboucher"
    assert follow_renames("Call Marcus about Webb's invoice", people) == "Call Robert about Boucher's invoice"
    # a name's word in prose counts only as a name is written; a longer word is no name
    assert follow_renames("you may rose the parking fee", people) == "you may rose the parking fee"
    assert follow_renames("parking", people) == "parking" and follow_renames("Lori", people) == "Lori"


def test_the_messages_say_a_persons_gender_where_no_name_list_does():
    """The youth-league read: "Keiko Morimoto emailed that she can take the game" was recast as "Daniel Ribeiro
    emailed that she ..." (Faker's lists gender no Keiko)."""
    from rods.synth.people import said_gender

    assert said_gender("Keiko Morimoto", "Keiko Morimoto emailed that she can take it. Assign her.") == "female"
    assert said_gender("Kwame Boateng", "Kwame Boateng told me he's switching to 20.") == "male"
    assert said_gender("Aroha Ngata", "Aroha has waited longest, so put her on the Minnows in his spot") == "female"
    # another person named before the pronoun: it may be theirs
    assert said_gender("Susan Tiihonen", "Susan Tiihonen called: Benjamin has asthma, so they want him out.") is None
    assert said_gender("Lan Nguyen", "Lan Nguyen paid") is None


def test_a_family_name_written_in_mixed_case_follows_its_rename():
    """The held-out ferry read (draw 1616, both readers): "my husband Alasdair MacLeod" of the renamed Fiona MacLeod
    read "Alasdair Fiala" in the words and 'Alasdair MacLeod' in the booking; 'MacLeod' is one name word. A word in
    capitals or lower case is still no name."""
    from rods.synth.people import follow_renames

    people = {"Fiona MacLeod": "Leona Fiala", "Rose Webb": "Ana Reyes"}
    assert follow_renames("Alasdair MacLeod", people) == "Alasdair Fiala"
    assert follow_renames("the ROSE garden of Rose Webb, a rose", people) == "the ROSE garden of Ana Reyes, a rose"


def test_names_with_accents_are_names_of_their_countries():
    """The held-out pharmacy: 'Lucía Fernández' was no person (the name lists hold 'Lucia', ASCII), so her recast
    kept her and failed; a kept first name took a family name of another country ('Lucía Boucsein')."""
    assert plain("Lucía Fernández") == "Lucia Fernandez" and plain("Zoë") == "Zoe"
    assert is_person_name("Lucía Fernández") and is_person_name("Zoë Müller")
    assert gender_of("Lucía") == gender_of("Lucia") == "female"
    locale = locale_of_first("Lucía")
    assert locale is not None and "Lucia" in people_pools()[locale][0]
    assert locale_of_first("Qwzx") is None


def test_a_relation_before_a_name_tells_the_gender_and_an_address_s_initial_follows_the_rename():
    """The held-out coworking read (draw 2121), both readers: "Kwame Mensah's sister Efua ... She'll take it" was
    renamed 'Hermanni' (Efua is in no name list, and the 'his' after her name was her brother's); one reader:
    Diego Alvarez renamed Aaro Kiviniemi kept the email 'd.kiviniemi@...'."""
    text = "Kwame Mensah's sister Efua is at reception for his post.\nShe'll take all of it, log it under Efua Mensah."
    assert said_gender("Efua Mensah", text) == "female" and said_gender("Kwame Mensah", text) is None
    assert said_gender("Hiroshi Tanaka", "collecting for my father, Hiroshi Tanaka, born 1955") == "male"
    assert said_gender("Ana Reyes", "my sister Ana Reyes and my brother, Ana Reyes") is None  # they disagree
    renames = {"Diego Alvarez": "Aaro Kiviniemi"}
    assert follow_renames("d.alvarez@copperleaf.law", renames) == "a.kiviniemi@copperleaf.law"
    assert follow_renames("d.smith@copperleaf.law", renames) == "d.smith@copperleaf.law"  # somebody else's


def test_japanese_and_chinese_names_have_their_country_and_a_family_keeps_one_country():
    """Reads of four held-out domains passed, but noted, 'Aiko Obasanjo', 'Wei Cunha', a boy Kenji and his father
    Hiroshi given a Nigerian family name, and a girl 'Edaviye Nakajima' whose mother is Asuka Nakajima: Faker's
    Latin lists held no Japanese or Chinese name, and each person of a family drew a country of their own."""
    assert locale_of_first("Hiroshi") == "ja_JP" and gender_of("Hiroshi") == "male"
    assert locale_of_first("Wei") == "zh_CN"
    for seed in range(10):
        remapper = ValueRemapper(random.Random(seed), frozenset(), [])
        mother = remapper.person("Ngozi Okafor").split()
        daughter = remapper.person("Chidinma Okafor").split()
        assert daughter[-1] == mother[-1]  # one family name
        assert remapper._locale[daughter[0].lower()] == remapper._locale[mother[-1].lower()]


def test_a_family_whose_first_name_stays_is_renamed_within_that_names_country():
    """The league read: 'Hiroshi Watanabe' was renamed first with a country in turn, and his son 'Kenji Watanabe',
    whose first name no list genders and so stays, became 'Kenji Cirino'. A recast settles such a family first: its
    family name's country (or its first name's); where no list knows either, a new family name all the same (kept,
    the person was a copy of the seed's, which the gate refuses)."""
    people = ["Hiroshi Watanabe", "Kenji Watanabe", "Thanh Trinh", "Linh Trinh", "Ana Reyes"]
    for seed in range(6):
        remapper = ValueRemapper(random.Random(seed), frozenset(), people)  # a seed's own names are not drawn
        remapper.like_seed = True
        remapper.settle_families(people, frozenset(people))
        father, son = remapper.person("Hiroshi Watanabe").split(), remapper.person("Kenji Watanabe").split()
        assert son[0] == "Kenji" and son[1] == father[1] != "Watanabe"
        assert son[1] in people_pools()["ja_JP"][1] and father[0] in people_pools()["ja_JP"][0]
        linh, thanh = remapper.person("Linh Trinh").split(), remapper.person("Thanh Trinh").split()
        assert linh[0] == "Linh" and linh[1] == thanh[1] != "Trinh"  # no list knows either: a new family name


def test_an_address_made_of_a_double_barrelled_or_whole_name_follows_it():
    """The allotment society's read (both readers): Joanne Whitfield-Price, renamed Celia Nieto, kept
    'celia.hosseiniprice@gmail.com' (her father's new family name and her old second one), and Li Wei, renamed Li
    Hou, kept 'liwei.garden@gmail.com'."""
    people = {"Dennis Whitfield": "Kari Hosseini", "Joanne Whitfield-Price": "Celia Nieto", "Li Wei": "Li Hou"}
    assert follow_renames("joanne.whitfieldprice@gmail.com", people) == "celia.nieto@gmail.com"
    assert follow_renames("dennis.whitfield41@gmail.com", people) == "kari.hosseini41@gmail.com"
    assert follow_renames("liwei.garden@gmail.com", people) == "lihou.garden@gmail.com"
    assert follow_renames("dwhitfield", people) == "khosseini"
    # and a short form of the first name beside the family name (noted in the same read)
    bernie = {"Bernadette O'Connell": "Anna Berg"}
    assert follow_renames("bernie.oconnell@gmail.com", bernie) == "anna.berg@gmail.com"
    assert follow_renames("bernard.smith@gmail.com", bernie) == "bernard.smith@gmail.com"  # somebody else


def test_a_reference_in_capitals_made_of_a_renamed_name_follows_it():
    """The driving school read (both readers): Kwame Asante, renamed Kwame Duran, paid with the reference
    'ASANTE-MAY'."""
    renamed = {"Kwame Asante": "Kwame Duran"}
    assert follow_renames("ASANTE-MAY", renamed) == "DURAN-MAY"
    assert follow_renames("UK-2025-001", renamed) == "UK-2025-001"
