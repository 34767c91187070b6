"""Task counts kept by the database, for ``sqlite://`` and ``postgresql://``.

ListTasks must answer an exact ``totalSize``, and ``max_tasks`` eviction must
know how many tasks are stored. Counting rows for that walks every match, on
every call: the cost grows with the store, not with the page. So a table
``a2a_task_counts`` keeps the numbers, one row per ``(owner, kind, key)``:

    ('', 'all', '')                       every stored task (eviction's bound)
    (<owner tag>, 'all', '')              the owner's tasks
    (<owner tag>, 'ctx', <context id>)    the owner's tasks in one context
    (<owner tag>, 'state', <state>)       the owner's tasks in one state

Triggers on ``a2a_tasks`` keep it in step with every insert, update and delete,
whoever writes (this store, its event channel, an older a2a-core on the same
database), in the writing transaction. A row that drops to zero is deleted,
so the table holds live contexts only. The owner tag is the one leases use:
``-`` for anonymous, ``=`` + the name otherwise ('' is no owner's).
"""

from __future__ import annotations

__all__ = [
    "ALL",
    "CONTEXT",
    "EVERYONE",
    "STATE",
    "postgres_counts_schema",
    "sqlite_counts_schema",
]

ALL, CONTEXT, STATE = "all", "ctx", "state"
EVERYONE = ""
"""The owner tag of the count of every stored task."""


def _keys(owner: str, context: str, state: str, d: str, *, moved: bool = False) -> str:
    """The (owner, kind, key, delta) rows one task counts in, as VALUES rows; ``moved``:
    only its context's and state's (an update leaves it in every task and its owner's)."""
    rows = f"({owner}, '{CONTEXT}', {context}, {d}), ({owner}, '{STATE}', {state}, {d})"
    return (
        rows if moved else f"('{EVERYONE}', '{ALL}', '', {d}), ({owner}, '{ALL}', '', {d}), {rows}"
    )


def _backfill(counts: str, tasks: str, owner: str) -> list[str]:
    """Statements that recount ``counts`` from ``tasks`` (``owner``: the tag expression)."""
    return [
        f"DELETE FROM {counts}",
        f"INSERT INTO {counts} (owner, kind, key, n)"
        f" SELECT '{EVERYONE}', '{ALL}', '', count(*) FROM {tasks} HAVING count(*) > 0"
        f" UNION ALL SELECT {owner}, '{ALL}', '', count(*) FROM {tasks} GROUP BY owner"
        f" UNION ALL SELECT {owner}, '{CONTEXT}', context_id, count(*) FROM {tasks}"
        " GROUP BY owner, context_id"
        f" UNION ALL SELECT {owner}, '{STATE}', state, count(*) FROM {tasks} GROUP BY owner, state",
    ]


# -- SQLite: row triggers -------------------------------------------------------------------
_SQLITE_TAG = "CASE WHEN {r}.owner IS NULL THEN '-' ELSE '=' || {r}.owner END"


def _sqlite_add(r: str, d: str, *, moved: bool = False) -> str:
    """Count the row ``r`` (NEW or OLD) in, or out with ``d`` = -1."""
    rows = _keys(_SQLITE_TAG.format(r=r), f"{r}.context_id", f"{r}.state", d, moved=moved)
    return (
        f"INSERT INTO a2a_task_counts (owner, kind, key, n) VALUES {rows}"
        " ON CONFLICT (owner, kind, key) DO UPDATE SET n = n + excluded.n;"
    )


_SQLITE_ZEROS = "DELETE FROM a2a_task_counts WHERE n = 0;"


def sqlite_counts_schema() -> list[str]:
    """The table, its triggers, and (last) the statements that recount it from the tasks."""
    return [
        "CREATE TABLE IF NOT EXISTS a2a_task_counts (owner TEXT NOT NULL, kind TEXT NOT NULL,"
        " key TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (owner, kind, key)) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS a2a_task_counts_zero ON a2a_task_counts (n) WHERE n = 0",
        "CREATE TRIGGER IF NOT EXISTS a2a_tasks_counted_insert AFTER INSERT ON a2a_tasks"
        f" BEGIN {_sqlite_add('NEW', '1')} END",
        "CREATE TRIGGER IF NOT EXISTS a2a_tasks_counted_delete AFTER DELETE ON a2a_tasks"
        f" BEGIN {_sqlite_add('OLD', '-1')} {_SQLITE_ZEROS} END",
        "CREATE TRIGGER IF NOT EXISTS a2a_tasks_counted_update"
        " AFTER UPDATE OF context_id, state ON a2a_tasks"
        " WHEN OLD.context_id IS NOT NEW.context_id OR OLD.state IS NOT NEW.state"
        f" BEGIN {_sqlite_add('NEW', '1', moved=True)} {_sqlite_add('OLD', '-1', moved=True)}"
        f" {_SQLITE_ZEROS} END",
        *_backfill("a2a_task_counts", "a2a_tasks", _SQLITE_TAG.format(r="a2a_tasks")),
    ]


# -- PostgreSQL: one statement trigger, over the statement's transition tables ---------------
def _pg_upsert(s: str, rows: str) -> str:
    """Add the deltas of ``rows`` (owner, context_id, state, d), in key order (no deadlock)."""
    return (
        f"INSERT INTO {s}.a2a_task_counts AS c (owner, kind, key, n)"
        " SELECT v.owner, v.kind, v.key, sum(v.d)"
        f" FROM ({rows}) AS r CROSS JOIN LATERAL"
        f" (VALUES {_keys('r.owner', 'r.context_id', 'r.state', 'r.d')}) AS v(owner, kind, key, d)"
        " GROUP BY v.owner, v.kind, v.key HAVING sum(v.d) <> 0"
        " ORDER BY v.owner, v.kind, v.key"
        " ON CONFLICT (owner, kind, key) DO UPDATE SET n = c.n + EXCLUDED.n;"
    )


def _pg_zeros(s: str, *, moved: bool) -> str:
    """Drop the rows the statement took to zero. Only the keys of its old rows (which the
    upsert just locked): a row another transaction holds is never waited for (a deadlock)."""
    keys = _keys("r.owner", "r.context_id", "r.state", "0", moved=moved)
    return (
        f"DELETE FROM {s}.a2a_task_counts AS c USING (SELECT DISTINCT v.owner, v.kind, v.key"
        f" FROM old_rows AS r CROSS JOIN LATERAL (VALUES {keys}) AS v(owner, kind, key, d)) AS z"
        " WHERE c.n = 0 AND c.owner = z.owner AND c.kind = z.kind AND c.key = z.key;"
    )


def postgres_counts_schema(s: str) -> tuple[str, list[str]]:
    """The table, function and triggers (one script: the function holds ``;``), and the
    statements that recount the table from the tasks (run right after, in the same
    transaction: the triggers' lock holds writers off)."""
    new = "SELECT owner, context_id, state, 1 AS d FROM new_rows"
    old = "SELECT owner, context_id, state, -1 AS d FROM old_rows"
    deleted, moved = _pg_zeros(s, moved=False), _pg_zeros(s, moved=True)
    script = f"""
CREATE TABLE IF NOT EXISTS {s}.a2a_task_counts (
    owner TEXT COLLATE "C" NOT NULL,
    kind TEXT NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (owner, kind, key)
);
CREATE OR REPLACE FUNCTION {s}.a2a_count_tasks() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    {_pg_upsert(s, new)}
  ELSIF TG_OP = 'DELETE' THEN
    {_pg_upsert(s, old)}
    {deleted}
  ELSE
    {_pg_upsert(s, f"{new} UNION ALL {old}")}
    {moved}
  END IF;
  RETURN NULL;
END
$fn$;
DROP TRIGGER IF EXISTS a2a_tasks_counted_insert ON {s}.a2a_tasks;
CREATE TRIGGER a2a_tasks_counted_insert AFTER INSERT ON {s}.a2a_tasks
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {s}.a2a_count_tasks();
DROP TRIGGER IF EXISTS a2a_tasks_counted_delete ON {s}.a2a_tasks;
CREATE TRIGGER a2a_tasks_counted_delete AFTER DELETE ON {s}.a2a_tasks
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION {s}.a2a_count_tasks();
DROP TRIGGER IF EXISTS a2a_tasks_counted_update ON {s}.a2a_tasks;
CREATE TRIGGER a2a_tasks_counted_update AFTER UPDATE ON {s}.a2a_tasks
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION {s}.a2a_count_tasks();
"""
    return script, _backfill(f"{s}.a2a_task_counts", f"{s}.a2a_tasks", "owner")
