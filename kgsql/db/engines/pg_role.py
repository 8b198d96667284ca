"""Whether the PostgreSQL role kgsql connected as could do more than read, from the catalog.

Generated SQL runs in a read-only transaction, but a read-only transaction
does not stop everything a privileged role can reach: ``COPY ... TO PROGRAM``
inside a function, server files, other sessions. The guard's last layer is
therefore a role that can only read (docs/engines.md, "The role kgsql runs
as"), and :func:`role_problems` is how kgsql checks it. A role is privileged
when it, or any role it can become with ``SET ROLE`` (``pg_has_role(...,
'MEMBER')``), is (:data:`ROLE_SQL`):

* a superuser, or has CREATEROLE, CREATEDB, REPLICATION or BYPASSRLS;
* a member of a predefined role that reaches the server or other sessions
  or writes everywhere: :data:`POWER_ROLES`;
* allowed INSERT, UPDATE, DELETE, TRUNCATE or TRIGGER on any table, view or
  foreign table of the database outside the system catalogs (PUBLIC may
  UPDATE the ``pg_settings`` view: that is ``SET``), or INSERT/UPDATE on any
  of its columns, or USAGE/UPDATE on a sequence (``nextval``);
* allowed CREATE on any schema, or on the database;
* the owner of any table, view, sequence, function or schema of the database
  (an owner can drop or alter it whatever its grants).

Reading (SELECT, ``pg_read_all_data``, ``pg_monitor``) and the TEMPORARY
privilege PUBLIC holds by default do not count: a read-only transaction
cannot create temporary tables.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["POWER_ROLES", "ROLE_SQL", "role_problems"]

#: Predefined roles whose members reach past reading this database.
POWER_ROLES: Final = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program",
                      "pg_write_all_data", "pg_signal_backend")

#: One row per reason the connected role is privileged (none: it can only read).
ROLE_SQL: Final = f"""
WITH me AS (
    SELECT r.oid, r.rolname, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls,
           CASE WHEN r.rolname = current_user THEN '' ELSE format(' (through role %I)', r.rolname) END AS via
    FROM pg_roles r WHERE pg_has_role(current_user, r.oid, 'MEMBER')
), reasons(rank, why) AS (
    SELECT 1, 'is a superuser' || via FROM me WHERE rolsuper
    UNION ALL SELECT 2, format('is a member of %s', rolname) FROM me
        WHERE rolname IN ({", ".join(f"'{r}'" for r in POWER_ROLES)})
    UNION ALL SELECT 3, 'may create roles (CREATEROLE)' || via FROM me WHERE rolcreaterole
    UNION ALL SELECT 3, 'may create databases (CREATEDB)' || via FROM me WHERE rolcreatedb
    UNION ALL SELECT 3, 'may replicate the cluster (REPLICATION)' || via FROM me WHERE rolreplication
    UNION ALL SELECT 3, 'bypasses row-level security (BYPASSRLS)' || via FROM me WHERE rolbypassrls
    UNION ALL (SELECT 4, format('may write table %s', c.oid::regclass) || me.via FROM me, pg_class c
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relnamespace NOT IN ('pg_catalog'::regnamespace,
                                                                               'information_schema'::regnamespace)
          AND (has_table_privilege(me.oid, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER')
               OR has_any_column_privilege(me.oid, c.oid, 'INSERT, UPDATE'))
        ORDER BY c.oid LIMIT 3)
    UNION ALL (SELECT 4, format('may advance sequence %s', c.oid::regclass) || me.via FROM me, pg_class c
        WHERE c.relkind = 'S' AND has_sequence_privilege(me.oid, c.oid, 'USAGE, UPDATE') ORDER BY c.oid LIMIT 3)
    UNION ALL (SELECT 5, format('may create objects in schema %I', n.nspname) || me.via FROM me, pg_namespace n
        WHERE has_schema_privilege(me.oid, n.oid, 'CREATE') ORDER BY n.oid LIMIT 3)
    UNION ALL SELECT 5, format('may create schemas in database %I', current_database()) || via FROM me
        WHERE has_database_privilege(me.oid, current_database(), 'CREATE')
    UNION ALL (SELECT 6, format('owns %s', c.oid::regclass) || me.via FROM me, pg_class c
        WHERE c.relowner = me.oid AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') ORDER BY c.oid LIMIT 3)
    UNION ALL (SELECT 6, format('owns function %s', p.oid::regprocedure) || me.via FROM me, pg_proc p
        WHERE p.proowner = me.oid ORDER BY p.oid LIMIT 3)
    UNION ALL (SELECT 6, format('owns schema %I', n.nspname) || me.via FROM me, pg_namespace n
        WHERE n.nspowner = me.oid ORDER BY n.oid LIMIT 3)
)
SELECT why FROM reasons ORDER BY rank, why
"""


def role_problems(run: Callable[[str], list[tuple[Any, ...]]]) -> list[str]:
    """Why the connected role could do more than read this database (empty when it can only read)."""
    return [str(why) for (why,) in run(ROLE_SQL)]
