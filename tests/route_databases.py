"""A folder of four small SQLite databases for routing tests: three about different things, and two
observatories with the same schema (a question about telescopes is a close call between them).

``make_databases(folder, tag)`` writes ``apiary_<tag>``, ``lighthouse_<tag>``, ``observatory_north_<tag>`` and
``observatory_south_<tag>`` and returns their names by topic. Every test uses the one ``TAG``: tests share a
graph, and a second copy of a database under another name would be a close call of its own.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

SCRIPTS = {
    "apiary": """
        CREATE TABLE hives (hive_id INTEGER PRIMARY KEY, hive_name TEXT, meadow TEXT);
        CREATE TABLE honey_harvests (harvest_id INTEGER PRIMARY KEY, hive_id INTEGER REFERENCES hives(hive_id),
                                     honey_kg REAL, harvest_date TEXT);
        CREATE TABLE queen_bees (queen_id INTEGER PRIMARY KEY, hive_id INTEGER REFERENCES hives(hive_id), breed TEXT);
        INSERT INTO hives VALUES (1, 'Clover', 'Wildflower Meadow'), (2, 'Heather', 'Moorland');
        INSERT INTO honey_harvests VALUES (1, 1, 12.5, '2024-07-01'), (2, 2, 8.0, '2024-07-03');
        INSERT INTO queen_bees VALUES (1, 1, 'Carniolan'), (2, 2, 'Buckfast');
    """,
    "lighthouse": """
        CREATE TABLE lighthouses (lighthouse_id INTEGER PRIMARY KEY, lighthouse_name TEXT, coast TEXT, height_m REAL);
        CREATE TABLE keepers (keeper_id INTEGER PRIMARY KEY, keeper_name TEXT,
                              lighthouse_id INTEGER REFERENCES lighthouses(lighthouse_id), years_served INTEGER);
        INSERT INTO lighthouses VALUES (1, 'Longships', 'Cornwall', 35.0), (2, 'Bell Rock', 'Angus', 35.3);
        INSERT INTO keepers VALUES (1, 'Grace Darling', 1, 12), (2, 'Robert Stevenson', 2, 30);
    """,
    "observatory_north": """
        CREATE TABLE telescopes (telescope_id INTEGER PRIMARY KEY, telescope_name TEXT, aperture_mm REAL);
        CREATE TABLE comet_sightings (sighting_id INTEGER PRIMARY KEY,
                                      telescope_id INTEGER REFERENCES telescopes(telescope_id), comet TEXT);
        INSERT INTO telescopes VALUES (1, 'Great Refractor', 600), (2, 'Small Dobsonian', 200);
        INSERT INTO comet_sightings VALUES (1, 1, 'Halley'), (2, 2, 'Hale-Bopp');
    """,
}
SCRIPTS["observatory_south"] = SCRIPTS["observatory_north"]

#: Questions with one right database each (by topic).
QUESTIONS = {
    "How much honey did each hive give?": "apiary",
    "Which queen bees are of the Buckfast breed?": "apiary",
    "Which keepers served at a lighthouse in Cornwall?": "lighthouse",
}
#: A question both observatories answer alike.
CLOSE_CALL = "How many telescopes are there?"


TAG = "rt"


def make_databases(folder: Path, tag: str = TAG) -> dict[str, str]:
    """Write the four databases into ``folder``; their names by topic."""
    folder.mkdir(parents=True, exist_ok=True)
    names = {}
    for topic, script in SCRIPTS.items():
        name = f"{topic}_{tag}"
        conn = sqlite3.connect(folder / f"{name}.sqlite")
        conn.executescript(script)
        conn.commit()
        conn.close()
        names[topic] = name
    return names
