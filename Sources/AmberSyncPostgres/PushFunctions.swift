/// The functions through which a batch of pushes reads and writes: `lockAndRead` and `write`
/// (schema 8), then `read` and `checkedWrite` (schema 9), which a batch calls today. The schema 8
/// pair stays in the database for server processes of the version before while they run.
///
/// A batch's reads and writes were statements sent whole for each batch: the database parsed,
/// analysed and planned them every time, half of its time when each push held one record. A
/// PL/pgSQL function keeps the plans of its statements for the session, and these plan them
/// generically (`plan_cache_mode = force_generic_plan`), once, with sequential scans and hash
/// and merge joins turned off: every row is looked up by its key, whatever the tables held
/// when the plan was made (a plan made once while they were small would otherwise scan them
/// whole on every batch once they had grown).
///
/// A migration splits its statements at each `;` that ends a line outside `$$ ... $$` quotes
/// (``PostgresSyncDatabase/statements(of:)``): each function is one statement.
enum PushFunctions {
    /// The settings each function plans and runs its statements with.
    private static let planning = """
        SET plan_cache_mode = force_generic_plan
        SET enable_seqscan = off
        SET enable_hashjoin = off
        SET enable_mergejoin = off
        """

    /// What both read functions read after the users' counters, as one query of `UNION ALL`s, in
    /// their rows' form: the users of the tokens (`t`), the answers already given to the pushes'
    /// mutations (`r`), the last mutation id each of their clients sent (`m`), and the current
    /// state of every record they touch (`c`).
    private static let batchReads = """
        SELECT 't'::text, t.user_id, t.hash, NULL::int8, NULL::text, NULL::text, NULL::int8,
            NULL::int8, NULL::text
        FROM amber_sync_tokens AS t WHERE t.hash = ANY(token_hashes)
        UNION ALL
        SELECT 'r', a.user_id, a.client_id, NULL, a.results, a.fingerprints, NULL, NULL, NULL
        FROM unnest(push_users, push_clients, first_ids, last_ids) AS p(u, c, first_id, last_id)
        JOIN amber_sync_push_answers AS a
            ON a.user_id = p.u AND a.client_id = p.c AND a.last_mutation_id >= p.first_id
            AND a.first_mutation_id <= p.last_id
        UNION ALL
        SELECT 'm', p.u, p.c, m.last, NULL, NULL, NULL, NULL, NULL
        FROM (SELECT DISTINCT u, c FROM unnest(push_users, push_clients) AS q(u, c)) AS p
        CROSS JOIN LATERAL (
            SELECT a.last_mutation_id AS last FROM amber_sync_push_answers AS a
            WHERE a.user_id = p.u AND a.client_id = p.c
            ORDER BY a.last_mutation_id DESC LIMIT 1
        ) AS m
        UNION ALL
        SELECT 'c', r.user_id, r.collection, NULL, r.id, r.value, r.version, r.created_version,
            r.field_versions
        FROM (SELECT DISTINCT u, c, i FROM unnest(record_users, record_collections, record_ids)
            AS k(u, c, i)) AS k
        JOIN amber_sync_records AS r ON r.user_id = k.u AND r.collection = k.c AND r.id = k.i
        """

    /// `amber_sync_lock_and_read`: locks the counter rows of `locked_users` in the order of
    /// their ids (skipping those another transaction holds when `skip_locked`), then reads the
    /// users of the tokens, the answers already given to the pushes' mutations, the last
    /// mutation id each of their clients sent, and the current state of every record they touch.
    ///
    /// The reads are a statement of their own, after the lock: in a volatile function each
    /// statement sees every commit made before it starts, so they see every commit of the
    /// users now held, and no other can commit for them until this transaction ends.
    ///
    /// Its rows are those of ``PostgresSyncDatabase/LockAndRead/Row``: a kind (`u` a locked
    /// user, `t` a token, `r` a push's answers, `m` a client's last mutation id, `c` a record)
    /// and the columns of that kind.
    static let lockAndRead = """
        CREATE OR REPLACE FUNCTION amber_sync_lock_and_read(
            locked_users int8[], token_hashes text[], push_users int8[], push_clients text[],
            first_ids int8[], last_ids int8[], record_users int8[], record_collections text[],
            record_ids text[], skip_locked boolean
        ) RETURNS TABLE (
            row_kind text, row_user int8, row_name text, row_number int8, row_value text,
            row_extra text, row_version int8, row_created int8, row_fields text
        ) LANGUAGE plpgsql
        \(planning)
        AS $$
        BEGIN
            IF skip_locked THEN
                RETURN QUERY
                SELECT 'u'::text, u.id, ''::text, u.version, NULL::text, NULL::text, NULL::int8,
                    NULL::int8, NULL::text
                FROM amber_sync_users AS u WHERE u.id = ANY(locked_users)
                ORDER BY u.id FOR UPDATE SKIP LOCKED;
            ELSE
                RETURN QUERY
                SELECT 'u'::text, u.id, ''::text, u.version, NULL::text, NULL::text, NULL::int8,
                    NULL::int8, NULL::text
                FROM amber_sync_users AS u WHERE u.id = ANY(locked_users)
                ORDER BY u.id FOR UPDATE;
            END IF;
            RETURN QUERY
            \(batchReads);
        END
        $$;
        """

    /// `amber_sync_write_batch`: forgets the answers the pushes' clients already got, inserts
    /// the records new to the database and rewrites those it held, keeps the answers given, adds
    /// a history row for each user whose records changed, and sets the counters of
    /// `counter_users` (those users: a batch that changed no record of a user leaves its row).
    ///
    /// New records are inserted plainly: their users' rows are locked, so none can have
    /// appeared since the batch read them, and an `ON CONFLICT` insert checks each index first.
    static let write = """
        CREATE OR REPLACE FUNCTION amber_sync_write_batch(
            forgotten_users int8[], forgotten_clients text[], forgotten_below int8[],
            new_users int8[], new_collections text[], new_ids text[], new_versions int8[],
            new_created int8[], new_values text[], new_deleted bool[], new_fields text[],
            stored_users int8[], stored_collections text[], stored_ids text[], stored_versions int8[],
            stored_created int8[], stored_values text[], stored_deleted bool[], stored_fields text[],
            answer_users int8[], answer_clients text[], answer_last int8[], answer_first int8[],
            answer_results text[], answer_fingerprints text[],
            history_users int8[], history_versions int8[], history_tags text[],
            counter_users int8[], counter_versions int8[]
        ) RETURNS void LANGUAGE plpgsql
        \(planning)
        AS $$
        BEGIN
            DELETE FROM amber_sync_push_answers AS r
            USING unnest(forgotten_users, forgotten_clients, forgotten_below) AS f(u, c, m)
            WHERE r.user_id = f.u AND r.client_id = f.c AND r.last_mutation_id < f.m;
            INSERT INTO amber_sync_records
                (user_id, collection, id, version, created_version, value, field_versions, changed_at)
            SELECT u, c, i, v, cv, CASE WHEN d THEN NULL ELSE val END, fv, now()
            FROM unnest(new_users, new_collections, new_ids, new_versions, new_created, new_values,
                new_deleted, new_fields) AS t(u, c, i, v, cv, val, d, fv);
            INSERT INTO amber_sync_records AS r
                (user_id, collection, id, version, created_version, value, field_versions, changed_at)
            SELECT u, c, i, v, cv, CASE WHEN d THEN NULL ELSE val END, fv, now()
            FROM unnest(stored_users, stored_collections, stored_ids, stored_versions, stored_created,
                stored_values, stored_deleted, stored_fields) AS t(u, c, i, v, cv, val, d, fv)
            ON CONFLICT (user_id, collection, id) DO UPDATE SET
                version = excluded.version,
                created_version = excluded.created_version,
                value = excluded.value,
                field_versions = excluded.field_versions,
                changed_at = excluded.changed_at;
            INSERT INTO amber_sync_push_answers
                (user_id, client_id, last_mutation_id, first_mutation_id, results, fingerprints)
            SELECT * FROM unnest(answer_users, answer_clients, answer_last, answer_first,
                answer_results, answer_fingerprints);
            INSERT INTO amber_sync_history (user_id, version, tag)
            SELECT * FROM unnest(history_users, history_versions, history_tags);
            UPDATE amber_sync_users AS u SET version = t.v
            FROM unnest(counter_users, counter_versions) AS t(id, v)
            WHERE u.id = t.id;
        END
        $$;
        """

    /// `amber_sync_read_batch` (schema 9): reads, in one statement and so as of one moment, the
    /// counters of `batch_users`, the users of the tokens, the answers already given to the
    /// pushes' mutations, the last mutation id each of their clients sent, and the current state
    /// of every record they touch. It locks nothing: ``checkedWrite`` locks the users' rows and
    /// writes only for users whose counter is still the one read here.
    ///
    /// Its rows are those of ``lockAndRead``: a kind (`u` a user's counter, `t` a token, `r` a
    /// push's answers, `m` a client's last mutation id, `c` a record) and the columns of that kind.
    static let read = """
        CREATE OR REPLACE FUNCTION amber_sync_read_batch(
            batch_users int8[], token_hashes text[], push_users int8[], push_clients text[],
            first_ids int8[], last_ids int8[], record_users int8[], record_collections text[],
            record_ids text[]
        ) RETURNS TABLE (
            row_kind text, row_user int8, row_name text, row_number int8, row_value text,
            row_extra text, row_version int8, row_created int8, row_fields text
        ) LANGUAGE plpgsql
        \(planning)
        AS $$
        BEGIN
            RETURN QUERY
            SELECT 'u'::text, u.id, ''::text, u.version, NULL::text, NULL::text, NULL::int8,
                NULL::int8, NULL::text
            FROM amber_sync_users AS u WHERE u.id = ANY(batch_users)
            UNION ALL
            \(batchReads);
        END
        $$;
        """

    /// `amber_sync_write_checked` (schema 9): locks the counter rows of `batch_users` in the order
    /// of their ids (skipping those another transaction holds when `skip_locked`, waiting for
    /// them otherwise), then does what ``write`` does for every user whose counter is still in
    /// `batch_versions` (the one ``read`` found), and nothing for the others, whose ids it returns:
    /// another transaction committed for them since, or holds them, and their pushes are decided
    /// again.
    ///
    /// The records in `new_*` are inserted plainly: those the batch read were not stored, and a
    /// creation's record it did not read fails the statement with a unique violation where one
    /// is stored, writing nothing; the batch is then decided again, reading it.
    ///
    /// Called on its own, outside `BEGIN`: the statement is its own transaction, committed before
    /// its answer is sent, so a batch costs two round trips. The locks keep each user's versions
    /// committing in order and hold off a user's deletion until the rows naming it are in.
    static let checkedWrite = """
        CREATE OR REPLACE FUNCTION amber_sync_write_checked(
            batch_users int8[], batch_versions int8[], skip_locked boolean,
            forgotten_users int8[], forgotten_clients text[], forgotten_below int8[],
            new_users int8[], new_collections text[], new_ids text[], new_versions int8[],
            new_created int8[], new_values text[], new_deleted bool[], new_fields text[],
            stored_users int8[], stored_collections text[], stored_ids text[], stored_versions int8[],
            stored_created int8[], stored_values text[], stored_deleted bool[], stored_fields text[],
            answer_users int8[], answer_clients text[], answer_last int8[], answer_first int8[],
            answer_results text[], answer_fingerprints text[],
            history_users int8[], history_versions int8[], history_tags text[],
            counter_users int8[], counter_versions int8[]
        ) RETURNS int8[] LANGUAGE plpgsql
        \(planning)
        AS $$
        DECLARE
            kept int8[];
            missed int8[];
        BEGIN
            IF skip_locked THEN
                SELECT coalesce(array_agg(l.id), '{}') INTO kept
                FROM (SELECT u.id, u.version FROM amber_sync_users AS u WHERE u.id = ANY(batch_users)
                    ORDER BY u.id FOR UPDATE SKIP LOCKED) AS l
                JOIN unnest(batch_users, batch_versions) AS b(id, v) ON b.id = l.id AND b.v = l.version;
            ELSE
                SELECT coalesce(array_agg(l.id), '{}') INTO kept
                FROM (SELECT u.id, u.version FROM amber_sync_users AS u WHERE u.id = ANY(batch_users)
                    ORDER BY u.id FOR UPDATE) AS l
                JOIN unnest(batch_users, batch_versions) AS b(id, v) ON b.id = l.id AND b.v = l.version;
            END IF;
            missed := ARRAY(SELECT b FROM unnest(batch_users) AS b WHERE b <> ALL(kept));
            DELETE FROM amber_sync_push_answers AS r
            USING unnest(forgotten_users, forgotten_clients, forgotten_below) AS f(u, c, m)
            WHERE r.user_id = f.u AND r.client_id = f.c AND r.last_mutation_id < f.m
                AND f.u <> ALL(missed);
            INSERT INTO amber_sync_records
                (user_id, collection, id, version, created_version, value, field_versions, changed_at)
            SELECT u, c, i, v, cv, CASE WHEN d THEN NULL ELSE val END, fv, now()
            FROM unnest(new_users, new_collections, new_ids, new_versions, new_created, new_values,
                new_deleted, new_fields) AS t(u, c, i, v, cv, val, d, fv)
            WHERE u <> ALL(missed);
            INSERT INTO amber_sync_records AS r
                (user_id, collection, id, version, created_version, value, field_versions, changed_at)
            SELECT u, c, i, v, cv, CASE WHEN d THEN NULL ELSE val END, fv, now()
            FROM unnest(stored_users, stored_collections, stored_ids, stored_versions, stored_created,
                stored_values, stored_deleted, stored_fields) AS t(u, c, i, v, cv, val, d, fv)
            WHERE u <> ALL(missed)
            ON CONFLICT (user_id, collection, id) DO UPDATE SET
                version = excluded.version,
                created_version = excluded.created_version,
                value = excluded.value,
                field_versions = excluded.field_versions,
                changed_at = excluded.changed_at;
            INSERT INTO amber_sync_push_answers
                (user_id, client_id, last_mutation_id, first_mutation_id, results, fingerprints)
            SELECT * FROM unnest(answer_users, answer_clients, answer_last, answer_first,
                answer_results, answer_fingerprints) AS a(u, c, l, f, r, p)
            WHERE u <> ALL(missed);
            INSERT INTO amber_sync_history (user_id, version, tag)
            SELECT * FROM unnest(history_users, history_versions, history_tags) AS h(u, v, t)
            WHERE u <> ALL(missed);
            UPDATE amber_sync_users AS u SET version = t.v
            FROM unnest(counter_users, counter_versions) AS t(id, v)
            WHERE u.id = t.id AND t.id <> ALL(missed);
            RETURN missed;
        END
        $$;
        """
}
