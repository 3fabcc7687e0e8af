"""Drawing what the selectors read: the closing report's HTML, Markdown and JSON
(`closing_report`), the burn-down (`spend_chart`) and the quality-per-dollar scatter
(`value_chart`), through Django templates. The geometry is pure, in `ledger/charts/`; this layer
only turns rows into its inputs and renders them. It sits above the selectors and below the
services, template tags, API and admin that show it."""
