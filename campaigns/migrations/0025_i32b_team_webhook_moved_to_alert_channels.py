"""The team's webhook is an alert channel now (ledger 0009 copied it, issue 32 item 3): its
columns go."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0024_i34_late_data"),
        ("ledger", "0013_i32b_one_alert_pipeline"),
    ]

    operations = [
        migrations.RemoveField(model_name="team", name="webhook_secret"),
        migrations.RemoveField(model_name="team", name="webhook_url"),
    ]
