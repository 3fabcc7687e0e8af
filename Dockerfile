FROM python:3.11-slim
# DEBUG=0: the production shape. Give it SECRET_KEY: its user cannot write a key file in /app,
# so without one it refuses to start (config/secret_key.py); compose requires it.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DEBUG=0
WORKDIR /app
COPY pyproject.toml README.md ./
# Every local app INSTALLED_APPS names, the project package, the templates and manage.py
# (tests/test_image.py lays out exactly these and runs collectstatic, compileall, check --deploy
# and migrate).
COPY config ./config
COPY catalog ./catalog
COPY campaigns ./campaigns
COPY estimates ./estimates
COPY ledger ./ledger
COPY mlflow_api ./mlflow_api
COPY campaign_desk_client ./campaign_desk_client
COPY templates ./templates
COPY manage.py ./
# The sources compiled once here: the image's user cannot write /app (nor would Python, with
# PYTHONDONTWRITEBYTECODE), so without .pyc files every gunicorn worker, Celery worker and
# beat process compiled the ~260 project modules it imports anew at each start (~0.2-0.3 s of
# CPU a process, measured on `manage.py check`). Python reads them whatever
# PYTHONDONTWRITEBYTECODE says.
RUN pip install --no-cache-dir . \
 && SECRET_KEY=build ALLOWED_HOSTS=build python manage.py collectstatic --noinput \
 && python -m compileall -q /app
# Uploaded artifacts (MEDIA_ROOT) live in a volume the image's user can write.
RUN useradd --create-home desk && mkdir -p /app/media && chown desk:desk /app/media
VOLUME ["/app/media"]
USER desk
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4"]
