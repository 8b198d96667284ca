"""Other rule: any failure no other rule answers gets SQLite's own message (and what it means, where a
message says less than it should)."""
from __future__ import annotations

from kgsql.correct.tip import Tip

__all__ = ["OTHER_TIP", "TEXT_IS_NO_GEOMETRY", "other_tips"]

OTHER_TIP = "SQLite reported an error: {message}; fix the query so that it runs."
#: PostGIS reads a quoted text given for a geometry as one ("parse error - invalid geometry"): mostly a
#: place's name where its geometry was meant.
TEXT_IS_NO_GEOMETRY = ("A quoted text is read as a geometry only when it is well-formed WKT "
                       "('SRID=4326;POINT(118.8 32.1)'); a place's name is no geometry: select the place's geometry "
                       "from the table that names it.")


def other_tips(message: str) -> list[Tip]:
    """One generic tip quoting ``message``; a second one saying what an invalid geometry usually is."""
    tips = [Tip("other", OTHER_TIP.format(message=message.strip().rstrip(".")))]
    if "invalid geometry" in message.lower():
        tips.append(Tip("suggestion", TEXT_IS_NO_GEOMETRY))
    return tips
