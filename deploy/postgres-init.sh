#!/bin/sh
# /docker-entrypoint-initdb.d hook of the postgres image: runs once, on an empty data volume,
# as POSTGRES_USER (the owner role, which runs the migrations). Creates the application role.
set -eu
: "${APP_DB_PASSWORD:?set APP_DB_PASSWORD}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
    --set owner="$POSTGRES_USER" \
    --set db="$POSTGRES_DB" \
    --set app_role="${APP_DB_USER:-campaign_desk_app}" \
    --set app_password="$APP_DB_PASSWORD" \
    --file /deploy/postgres-init.sql
