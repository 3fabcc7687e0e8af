-- The application's database role: data only, no ownership, no superuser.
--
-- Run once by psql as the database owner (deploy/postgres-init.sh does it when the postgres
-- container initialises an empty volume), with psql variables:
--   owner         the role that owns the database and runs `manage.py migrate` (service migrate)
--   app_role      the role web, worker and beat connect as
--   app_password  its password
--   db            the database
-- The owner creates every table and the append-only trigger function; the application role
-- gets only SELECT/INSERT/UPDATE/DELETE on the tables the owner creates (no TRUNCATE, no
-- REFERENCES, no TRIGGER). Not owning the tables, it cannot ALTER them to disable or drop the
-- append-only triggers, nor replace their function; not a superuser, it cannot set
-- session_replication_role. What the triggers refuse (ledger/migrations/0003) is refused to it.

CREATE ROLE :"app_role" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS
    PASSWORD :'app_password';

REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE :"db" TO :"app_role";

REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO :"app_role";

ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"app_role";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public
    GRANT USAGE, SELECT ON SEQUENCES TO :"app_role";
-- Tables created before this script ran (none on a fresh volume; kept for re-runs by hand).
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO :"app_role";
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO :"app_role";
