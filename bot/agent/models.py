"""Builds the language model named by COUNTERSIGN_MODEL; never reads the environment itself.

``offline`` is the embedded default (no key, no network). ``openai-chat:<name>`` talks to
OpenAI, or to any OpenAI-compatible server (Ollama, vLLM, a gateway) when
COUNTERSIGN_MODEL_BASE_URL is set. ``anthropic:<name>`` talks to Anthropic.
"""

from __future__ import annotations

from pydantic_ai.models import Model

from bot.agent.offline import offline_model
from bot.settings import Settings, SettingsError

__all__ = ["build_model"]

_KINDS = "offline, openai-chat:<model> or anthropic:<model>"


def build_model(settings: Settings) -> Model:
    """The model for ``settings.countersign_model``, or a SettingsError saying what to set."""
    spec = settings.countersign_model.strip()
    if spec == "offline":
        return offline_model()
    kind, _, name = spec.partition(":")
    name = name.strip()
    if not name:
        raise SettingsError(f"COUNTERSIGN_MODEL={spec!r} names no model; use {_KINDS}.")
    if kind == "openai-chat":
        return _openai_chat(settings, name)
    if kind == "anthropic":
        return _anthropic(settings, name)
    raise SettingsError(
        f"COUNTERSIGN_MODEL={spec!r} is not a model this product knows; use {_KINDS} "
        "(openai: means OpenAI's Responses API, use openai-chat: instead)."
    )


# Each provider's SDK is imported only when it is the one configured: the OpenAI and Anthropic
# SDKs together are some 3,700 modules, which every server and worker loaded at start-up, most
# of them running the offline model and needing neither.


def _openai_chat(settings: Settings, name: str) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    base_url = settings.countersign_model_base_url
    if base_url:
        provider = OpenAICompatibleProvider("openai-compatible", base_url=base_url, api_key=key)
        return OpenAIChatModel(name, provider=provider)
    if not key:
        raise SettingsError(
            "COUNTERSIGN_MODEL=openai-chat:… needs OPENAI_API_KEY, or "
            "COUNTERSIGN_MODEL_BASE_URL for an OpenAI-compatible server."
        )
    return OpenAIChatModel(name, provider=OpenAIProvider(api_key=key))


def _anthropic(settings: Settings, name: str) -> Model:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    if settings.anthropic_api_key is None:
        raise SettingsError("COUNTERSIGN_MODEL=anthropic:… needs ANTHROPIC_API_KEY.")
    provider = AnthropicProvider(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.countersign_model_base_url,
    )
    return AnthropicModel(name, provider=provider)
