"""Graph-derived hints: exact lines from value hits and the FK graph."""
from __future__ import annotations

from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, Table
from kgsql.stages.hints import join_lines, named_values, value_lines
from kgsql.retrieve.values import ValueMatch

WORLD = DatabaseSchema(
    name="world",
    tables=[
        Table("city", [Column("ID", "INTEGER", is_primary_key=True), Column("Name", "TEXT"),
                       Column("CountryCode", "TEXT")]),
        Table("country", [Column("Code", "TEXT", is_primary_key=True), Column("Name", "TEXT"),
                          Column("Continent", "TEXT"), Column("Region", "TEXT")]),
        Table("countrylanguage", [Column("CountryCode", "TEXT"), Column("Language", "TEXT")]),
        Table("island", [Column("Name", "TEXT")]),
    ],
    foreign_keys=[ForeignKey("city", "CountryCode", "country", "Code"),
                  ForeignKey("countrylanguage", "CountryCode", "country", "Code")],
)


def test_named_values_keep_whole_word_values_best_first_and_no_numbers() -> None:
    hits = [ValueMatch("country", "Region", "Southern Africa", 0.8), ValueMatch("country", "Continent", "Africa", 1.0),
            ValueMatch("city", "Name", "Af", 0.9), ValueMatch("country", "Code", "30", 1.0),
            ValueMatch("country", "Continent", "Africa", 0.7)]
    chosen = named_values(hits, "Which African countries in Africa have more than 30 cities?")
    assert [(v.table, v.column, v.value) for v in chosen] == [("country", "Continent", "Africa")]


def test_value_lines_join_columns_of_one_value() -> None:
    hits = [ValueMatch("country", "Continent", "Europe"), ValueMatch("island", "Name", "Europe"),
            ValueMatch("countrylanguage", "Language", "Dutch")]
    assert value_lines(hits) == ["'Europe' is a value of country.Continent or island.Name.",
                                 "'Dutch' is a value of countrylanguage.Language."]
    assert value_lines([ValueMatch("city", "Name", "Cote d'Ivoire")]) == ["'Cote d''Ivoire' is a value of city.Name."]


def test_join_lines_connect_tables_through_the_fk_graph() -> None:
    assert join_lines(WORLD, ["city", "countrylanguage"]) == [
        "If the query needs several of these tables, join them on countrylanguage.CountryCode = country.Code "
        "and city.CountryCode = country.Code."]
    assert join_lines(WORLD, ["city"]) == []                       # one table: nothing to join
    assert join_lines(WORLD, ["city", "island"]) == []             # no key path
    assert join_lines(WORLD, ["city", "nowhere"]) == []            # unknown names are ignored
    assert join_lines(WORLD, ["city", "country", "countrylanguage", "island", "x"], max_tables=3) == []


def test_a_pair_of_tables_linked_by_two_keys_gets_no_join_hint() -> None:
    """Friend.student_id and Friend.friend_id both reference Highschooler.ID: only the question says which."""
    people = DatabaseSchema("network", [
        Table("Highschooler", [Column("ID", "INTEGER", is_primary_key=True), Column("name", "TEXT")]),
        Table("Friend", [Column("student_id", "INTEGER"), Column("friend_id", "INTEGER")]),
        Table("Grade", [Column("student_id", "INTEGER"), Column("grade", "INTEGER")])],
        [ForeignKey("Friend", "student_id", "Highschooler", "ID"), ForeignKey("Friend", "friend_id", "Highschooler", "ID"),
         ForeignKey("Grade", "student_id", "Highschooler", "ID")])
    assert join_lines(people, ["Highschooler", "Friend"]) == []
    assert join_lines(people, ["Friend", "Grade"]) == [
        "If the query needs several of these tables, join them on Grade.student_id = Highschooler.ID."]


def _heroes() -> DatabaseSchema:
    """One lookup table (colour) behind three keys of superhero, as in BIRD's superhero database."""
    def t(name: str, *cols: str) -> Table:
        return Table(name, [Column(c, "INTEGER" if c == "id" or c.endswith("_id") else "TEXT", is_primary_key=c == "id")
                            for c in cols])

    return DatabaseSchema("heroes", [t("colour", "id", "colour"), t("gender", "id", "gender"),
                                     t("superhero", "id", "superhero_name", "eye_colour_id", "skin_colour_id",
                                       "gender_id")],
                          [ForeignKey("superhero", "eye_colour_id", "colour", "id"),
                           ForeignKey("superhero", "skin_colour_id", "colour", "id"),
                           ForeignKey("superhero", "gender_id", "gender", "id")])


def test_key_lines_name_the_key_the_question_means_with_its_join_and_label() -> None:
    from kgsql.stages.hints import key_lines

    schema = _heroes()
    assert key_lines(schema, "What is the eye colour of superhero 75?") == [
        "eye colour: join colour on superhero.eye_colour_id = colour.id and read colour.colour."]
    both = key_lines(schema, "Provide the eye colors of the heroes whose skin colours are gold.")  # plural, US spelling
    assert [line.split(":")[0] for line in both] == ["eye colour", "skin colour"]
    assert key_lines(schema, "How many female heroes?") == []                 # no key named
    assert key_lines(schema, "List the heroes by gender.") == []              # gender_id -> gender: nothing to add
    assert join_lines(schema, ["superhero", "colour"]) == []                   # what the join hints leave out


def test_key_lines_only_for_columns_named_as_keys() -> None:
    from kgsql.stages.hints import key_lines

    schema = DatabaseSchema("cars", [Table("countries", [Column("CountryId", "INTEGER", is_primary_key=True),
                                                          Column("CountryName", "TEXT")]),
                                     Table("car_makers", [Column("Id", "INTEGER", is_primary_key=True),
                                                          Column("Maker", "TEXT"), Column("Country", "TEXT")])],
                            [ForeignKey("car_makers", "Country", "countries", "CountryId")])
    assert key_lines(schema, "Which country has the most car makers?") == []  # Spider's 'Country' is no *_id key


def test_meaning_lines_give_the_code_table_of_a_column_whose_meaning_the_question_uses() -> None:
    from kgsql.stages.hints import meaning_lines

    bank = DatabaseSchema("bank", [
        Table("client", [Column("client_id", "INTEGER", is_primary_key=True),
                         Column("gender", "TEXT", value_explanation="F\uff1afemale \nM\uff1amale")]),
        Table("card", [Column("card_id", "INTEGER", is_primary_key=True),
                       Column("isPromo", "INTEGER", value_explanation="0: is not 1: is"),
                       Column("status", "TEXT", value_explanation="Active: in use\nClosed: no longer in use")])])
    assert meaning_lines(bank, "How many female clients opened an account in 1996?") == [
        "client.gender: 'F' = female, 'M' = male."]
    assert meaning_lines(bank, "Is this card a promo?") == []            # "is" / "is not" say nothing
    assert meaning_lines(bank, "Which cards are no longer in use?") == []  # readable codes: the value hints' job
    assert meaning_lines(bank, "How many clients are there?") == []
