"""Teams surface scenarios: Activity JSON over /api/messages, a fake Bot Connector."""
