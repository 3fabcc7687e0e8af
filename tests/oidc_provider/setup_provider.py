"""Run inside the provider's process (`django-admin shell -c` is avoided: a plain script run
with DJANGO_SETTINGS_MODULE=tests.oidc_provider.settings): migrate, then create the users and
the client. Arguments: REDIRECT_URI CLIENT_ID CLIENT_SECRET, then USER:PASSWORD:GROUP|GROUP…"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from oauth2_provider.models import Application

    call_command("migrate", verbosity=0)
    redirect_uri, client_id, client_secret, *users = argv
    Application.objects.create(
        name="campaign-desk",
        client_id=client_id,
        client_secret=client_secret,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=redirect_uri,
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )
    for spec in users:
        username, password, groups = spec.split(":", 2)
        user = User.objects.create_user(username, email=f"{username}@example.org",
                                        password=password)  # fmt: skip
        for name in filter(None, groups.split("|")):
            user.groups.add(Group.objects.get_or_create(name=name)[0])


if __name__ == "__main__":
    main(sys.argv[1:])
