"""Run inside the provider's process (`django-admin shell -c` is avoided: a plain script run
with DJANGO_SETTINGS_MODULE=tests.oidc_provider.settings): migrate, then create the users and
the client. Arguments: REDIRECT_URI CLIENT_ID CLIENT_SECRET, then USER:PASSWORD:GROUP|GROUP…
(the redirect URI's site, with /admin/login/, is also where logging out returns).
`--disable USER`: the provider's account USER can no longer sign in."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from oauth2_provider.models import Application

    if argv[0] == "--disable":
        User.objects.filter(username=argv[1]).update(is_active=False)
        return
    call_command("migrate", verbosity=0)
    redirect_uri, client_id, client_secret, *users = argv
    site = redirect_uri.split("/oidc/", 1)[0]
    Application.objects.create(
        name="campaign-desk",
        client_id=client_id,
        client_secret=client_secret,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=redirect_uri,
        post_logout_redirect_uris=f"{site}/admin/login/",
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
