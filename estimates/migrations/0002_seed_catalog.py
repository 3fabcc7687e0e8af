from django.db import migrations


def seed(apps, schema_editor):
    from estimates.seeding import seed_catalog

    seed_catalog(apps)


class Migration(migrations.Migration):
    dependencies = [("estimates", "0001_initial")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
