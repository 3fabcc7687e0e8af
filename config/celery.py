import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Every task is a DeskTask: `task.delay_on_commit(...)` never fails a committed write
# (campaigns/enqueue.py).
app = Celery("campaign_desk", task_cls="campaigns.enqueue:DeskTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
