"""The small school database the retrieval tests query, with known answers."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from kgsql.schema.model import DatabaseSchema

SCHOOL_DDL = """
CREATE TABLE students (
  student_id INTEGER PRIMARY KEY,
  full_name TEXT NOT NULL,
  dob TEXT,
  home_city TEXT,
  sc_avg REAL
);
CREATE TABLE courses (
  course_id INTEGER PRIMARY KEY,
  title TEXT,
  dept TEXT,
  credits INTEGER
);
CREATE TABLE enrollments (
  student_id INTEGER REFERENCES students(student_id),
  course_id INTEGER REFERENCES courses(course_id),
  grade TEXT,
  PRIMARY KEY (student_id, course_id)
);
CREATE TABLE buildings (
  building_id INTEGER PRIMARY KEY,
  bname TEXT,
  floors INTEGER
);
CREATE TABLE rooms (
  room_id INTEGER PRIMARY KEY,
  building_id INTEGER REFERENCES buildings(building_id),
  capacity INTEGER
);
"""

CITIES = ["Springfield", "Shelbyville", "Capital City", "Ogdenville"]
TITLES = ["Linear Algebra", "Organic Chemistry", "Medieval History", "Databases"]


def make_school_db(path: Path) -> Path:
    """A small school database whose answers the tests know."""
    conn = sqlite3.connect(path)
    conn.executescript(SCHOOL_DDL)
    for i in range(40):
        conn.execute("INSERT INTO students VALUES (?, ?, ?, ?, ?)",
                     (i, f"Student Number{i}", f"200{i % 10}-01-0{1 + i % 9}", CITIES[i % 4], 2.0 + (i % 20) / 10))
    for i, title in enumerate(TITLES):
        conn.execute("INSERT INTO courses VALUES (?, ?, ?, ?)", (i, title, ["MATH", "CHEM", "HIST", "CS"][i], 3 + i % 2))
    for i in range(40):
        conn.execute("INSERT INTO enrollments VALUES (?, ?, ?)", (i, i % 4, "ABCD"[i % 4]))
    for i in range(3):
        conn.execute("INSERT INTO buildings VALUES (?, ?, ?)", (i, f"Hall {i}", 2 + i))
        conn.execute("INSERT INTO rooms VALUES (?, ?, ?)", (i, i, 20 * (i + 1)))
    conn.commit()
    conn.close()
    return path


def school_schema(path: Path) -> DatabaseSchema:
    """Read the school database and add the descriptions a profile would supply."""
    from kgsql.ingest.reader import read_database

    schema = read_database(path)
    students = schema.table("students")
    students.column("sc_avg").description = "grade point average of the student"
    students.column("dob").description = "date of birth"
    schema.table("buildings").column("bname").description = "name of the building"
    return schema
