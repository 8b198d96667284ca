// Remember mined pairs so mining again skips them.
UNWIND $pairs AS row
MERGE (p:MinedPair {key: row.key})
SET p = row;
