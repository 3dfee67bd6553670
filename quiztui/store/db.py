"""Opening the database, the schema and its migrations (PRAGMA user_version)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from quiztui.errors import StoreError

SCHEMA_V1 = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'vet',
    quiz_path TEXT,
    quiz_title TEXT NOT NULL,
    quiz_hash TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    base_url TEXT NOT NULL,
    judge_label TEXT NOT NULL,
    simulated INTEGER NOT NULL,
    judge_key TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    seed INTEGER NOT NULL,
    batch_size INTEGER NOT NULL,
    params_json TEXT NOT NULL,
    summary_json TEXT
);
CREATE TABLE questions (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    question_id TEXT NOT NULL,
    text TEXT NOT NULL,
    options_json TEXT NOT NULL,
    key INTEGER NOT NULL,
    truth INTEGER,
    PRIMARY KEY (run_id, question_id)
);
CREATE TABLE assertions (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    question_id TEXT NOT NULL,
    option_index INTEGER NOT NULL,
    text TEXT NOT NULL,
    keyed INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE batches (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    batch_no INTEGER NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    error TEXT,
    prompt TEXT NOT NULL,
    raw_reply TEXT,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX batches_run ON batches(run_id);
CREATE TABLE verdicts (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    verdict INTEGER,
    reason TEXT NOT NULL DEFAULT '',
    cached INTEGER NOT NULL DEFAULT 0,
    p_true REAL,
    batch_id INTEGER REFERENCES batches(id),
    unjudged_reason TEXT,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE usage (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    requests INTEGER NOT NULL DEFAULT 0,
    retries INTEGER NOT NULL DEFAULT 0,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE cache (
    key TEXT PRIMARY KEY,
    verdict INTEGER NOT NULL,
    reason TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""

# v2: judge profiles, one row per calibration run of one judge set-up.
SCHEMA_V2_PROFILES = """
CREATE TABLE profiles (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    batch_size INTEGER NOT NULL,
    mode TEXT NOT NULL,
    simulated INTEGER NOT NULL,
    gold TEXT NOT NULL,
    questions INTEGER NOT NULL,
    tp INTEGER NOT NULL,
    fn INTEGER NOT NULL,
    tn INTEGER NOT NULL,
    fp INTEGER NOT NULL,
    unjudged INTEGER NOT NULL,
    requests INTEGER NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    cost REAL,
    latency REAL,
    wall_time REAL NOT NULL,
    interval_method TEXT NOT NULL,
    run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL
);
CREATE INDEX profiles_judge ON profiles(provider, model, prompt_hash, batch_size, mode)
"""

# v4: grade runs (candidate answers graded against references; benchmarks) and their outcomes.
SCHEMA_V4_GRADES = """
CREATE TABLE grade_runs (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    source TEXT,
    grader TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    judge_label TEXT NOT NULL,
    simulated INTEGER NOT NULL,
    prompt_hash TEXT NOT NULL,
    params_json TEXT NOT NULL,
    summary_json TEXT,
    benchmark_json TEXT
);
CREATE TABLE grades (
    run_id INTEGER NOT NULL REFERENCES grade_runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    split TEXT NOT NULL DEFAULT '',
    item_id TEXT NOT NULL,
    question TEXT NOT NULL,
    reference TEXT NOT NULL,
    candidate TEXT NOT NULL,
    human REAL,
    raw REAL,
    label TEXT NOT NULL,
    reasoning TEXT NOT NULL,
    unscored TEXT,
    facts_json TEXT,
    reply TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    PRIMARY KEY (run_id, split, seq)
)
"""

SCHEMA_V5_ROBUSTNESS = """
CREATE TABLE robustness_runs (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    quiz_path TEXT,
    quiz_title TEXT NOT NULL,
    quiz_hash TEXT NOT NULL,
    format TEXT NOT NULL,
    variants INTEGER NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    judge_label TEXT NOT NULL,
    simulated INTEGER NOT NULL,
    prompt_hash TEXT NOT NULL,
    params_json TEXT NOT NULL,
    summary_json TEXT
);
CREATE INDEX robustness_runs_quiz ON robustness_runs(quiz_hash, id);
CREATE TABLE robustness_questions (
    run_id INTEGER NOT NULL REFERENCES robustness_runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    question_id TEXT NOT NULL,
    text TEXT NOT NULL,
    forms_json TEXT NOT NULL,
    rewrite_reply TEXT NOT NULL,
    rewrite_note TEXT,
    answers_json TEXT NOT NULL,
    metrics_json TEXT NOT NULL,
    fragile INTEGER NOT NULL,
    fragile_reason TEXT NOT NULL,
    tokens_json TEXT NOT NULL,
    PRIMARY KEY (run_id, question_id)
)
"""

# v6: review runs (seed 004): each question's outcome and every iteration of its trajectory.
SCHEMA_V6_REVIEWS = """
CREATE TABLE review_runs (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    quiz_path TEXT,
    quiz_title TEXT NOT NULL,
    quiz_hash TEXT NOT NULL,
    mode TEXT NOT NULL,
    max_iterations INTEGER NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    judge_label TEXT NOT NULL,
    model2 TEXT,
    judge2_label TEXT,
    simulated INTEGER NOT NULL,
    prompt_hash TEXT NOT NULL,
    params_json TEXT NOT NULL,
    summary_json TEXT
);
CREATE TABLE review_questions (
    run_id INTEGER NOT NULL REFERENCES review_runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    question_id TEXT NOT NULL,
    text TEXT NOT NULL,
    context TEXT,
    scores_json TEXT,
    converged INTEGER,
    converged_at INTEGER,
    iterations INTEGER NOT NULL,
    unscored TEXT,
    rewrite INTEGER NOT NULL,
    PRIMARY KEY (run_id, question_id)
);
CREATE TABLE review_iterations (
    run_id INTEGER NOT NULL REFERENCES review_runs(id) ON DELETE CASCADE,
    question_id TEXT NOT NULL,
    iteration INTEGER NOT NULL,
    judge INTEGER NOT NULL,
    model TEXT NOT NULL,
    scores_json TEXT,
    strengths_json TEXT,
    flaws_json TEXT,
    reply TEXT NOT NULL,
    unparsed TEXT,
    failed INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    PRIMARY KEY (run_id, question_id, iteration)
)
"""

# v7: provider batches (OpenAI Batch, Anthropic Message Batches) submitted for a run, and each
# request in them by its content-addressed custom_id: a resumed run collects, never resubmits.
SCHEMA_V7_PROVIDER_BATCHES = """
CREATE TABLE provider_batches (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    api TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    status TEXT NOT NULL,
    total INTEGER NOT NULL,
    completed INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    collected_at REAL
);
CREATE INDEX provider_batches_run ON provider_batches(run_id);
CREATE TABLE provider_batch_requests (
    batch INTEGER NOT NULL REFERENCES provider_batches(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    custom_id TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    text TEXT,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    finish_reason TEXT,
    error TEXT,
    PRIMARY KEY (batch, position)
)
"""

# v8: one process works on a run at a time: its lease (pid, host, heartbeat; store/leases.py).
SCHEMA_V8_RUN_LEASES = """
CREATE TABLE run_leases (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    token TEXT NOT NULL,
    acquired_at REAL NOT NULL,
    heartbeat REAL NOT NULL
)
"""

# v9: the review desk's decisions (store/decisions.py): accept / fix / rewrite / drop with a note,
# by the question's content hash, so a later run of the same quiz finds them.
SCHEMA_V9_DECISIONS = """
CREATE TABLE decisions (
    id INTEGER PRIMARY KEY,
    decided_at REAL NOT NULL,
    run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    quiz_hash TEXT NOT NULL,
    question_id TEXT NOT NULL,
    question_hash TEXT NOT NULL,
    action TEXT NOT NULL,
    key INTEGER NOT NULL,
    option INTEGER,
    note TEXT NOT NULL DEFAULT ''
);
CREATE INDEX decisions_question ON decisions(question_hash, id);
CREATE INDEX decisions_run ON decisions(run_id)
"""

# v10: generate runs (store/generate.py), so every kind of run is in the history.
SCHEMA_V10_GENERATE = """
CREATE TABLE generate_runs (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    document TEXT NOT NULL,
    subject TEXT NOT NULL,
    output TEXT NOT NULL,
    judge_label TEXT NOT NULL,
    model TEXT NOT NULL,
    simulated INTEGER NOT NULL,
    summary_json TEXT
);
CREATE TABLE generate_pairs (
    run_id INTEGER NOT NULL REFERENCES generate_runs(id) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    context_status TEXT NOT NULL,
    PRIMARY KEY (run_id, n)
)
"""

# v11: k-fold fits of graders on a user's marks (store/grade_fits.py): what was fitted on what,
# how it ended, and the whole fold table as JSON, so ``quiztui runs`` can show it again.
SCHEMA_V11_GRADE_FITS = """
CREATE TABLE grade_fits (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    source TEXT NOT NULL,
    digest TEXT NOT NULL,
    marked INTEGER NOT NULL,
    graders_json TEXT NOT NULL,
    folds INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    scale_lo REAL NOT NULL,
    scale_hi REAL NOT NULL,
    judge_label TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    simulated INTEGER NOT NULL DEFAULT 0,
    grade_runs_json TEXT NOT NULL DEFAULT '[]',
    unscored INTEGER NOT NULL DEFAULT 0,
    not_run INTEGER NOT NULL DEFAULT 0,
    calibration_path TEXT,
    error TEXT,
    result_json TEXT
)
"""

# v12: the leases of the runs kept outside ``runs`` (grade, review, robustness, generate, k-fold
# fits; store/leases.py KIND_TABLES), keyed by (kind, run id): each kind has its own id sequence,
# so no foreign key. ``heartbeat`` NULL: a holder that never beats, judged by its pid.
SCHEMA_V12_KIND_LEASES = """
CREATE TABLE kind_leases (
    kind TEXT NOT NULL,
    run_id INTEGER NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    token TEXT NOT NULL,
    acquired_at REAL NOT NULL,
    heartbeat REAL,
    PRIMARY KEY (kind, run_id)
)
"""

# Migration n brings the schema from version n to n + 1 (PRAGMA user_version).
MIGRATIONS: list[str] = [
    SCHEMA_V1,
    SCHEMA_V2_PROFILES,
    "ALTER TABLE cache ADD COLUMN p_true REAL",  # v3: P(true) from logprobs, cached with the verdict
    SCHEMA_V4_GRADES,
    SCHEMA_V5_ROBUSTNESS,
    SCHEMA_V6_REVIEWS,
    SCHEMA_V7_PROVIDER_BATCHES,
    SCHEMA_V8_RUN_LEASES,
    SCHEMA_V9_DECISIONS,
    SCHEMA_V10_GENERATE,
    SCHEMA_V11_GRADE_FITS,
    SCHEMA_V12_KIND_LEASES,
]


def connect(path: Path | str) -> sqlite3.Connection:
    """Open (creating if needed) the store at ``path`` and bring its schema up to date."""
    path = Path(path)
    try:
        if str(path) != ":memory:":
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=5000")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StoreError(f"{path}: database schema {version} is newer than this quiztui")
        while version < len(MIGRATIONS):
            # IMMEDIATE takes the write lock first, so two processes opening a new store at once
            # cannot both apply the same migration; the version is re-read under the lock.
            conn.execute("BEGIN IMMEDIATE")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version < len(MIGRATIONS):
                for statement in MIGRATIONS[version].split(";"):
                    if statement.strip():
                        conn.execute(statement)
                version += 1
                conn.execute(f"PRAGMA user_version = {version}")
            conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the run store: {exc}") from None
    return conn
