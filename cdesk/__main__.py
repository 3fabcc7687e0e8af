"""``python -m cdesk``: the command line (campaign_desk_client/cli.py)."""

from campaign_desk_client.cli import main

raise SystemExit(main())
