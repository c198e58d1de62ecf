"""Build the example's template database, shop.db, in the current directory from shop.sql beside this file."""

import sqlite3
from pathlib import Path

connection = sqlite3.connect("shop.db")
connection.executescript((Path(__file__).parent / "shop.sql").read_text())
connection.commit()
connection.close()
