FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config ./config
COPY campaigns ./campaigns
COPY estimates ./estimates
COPY ledger ./ledger
COPY templates ./templates
COPY manage.py ./
RUN pip install --no-cache-dir . \
 && SECRET_KEY=build DEBUG=0 ALLOWED_HOSTS=build python manage.py collectstatic --noinput
RUN useradd --create-home desk
USER desk
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4"]
