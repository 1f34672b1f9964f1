"""The tuned numbers: each a described field of its group, nested in Settings, set by the environment where
a variable names it."""

from __future__ import annotations

from dataclasses import fields

import pytest

from assistant.errors import SettingsError
from assistant.settings import Settings
from assistant.tuning import OfflineAnswerSettings, RefusalSettings, RetrievalSettings, SupportSettings, describe

GROUPS = {
    "retrieval": RetrievalSettings,
    "refusal": RefusalSettings,
    "support": SupportSettings,
    "offline_answer": OfflineAnswerSettings,
}


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_every_tuned_number_is_described_and_nested_in_settings(name: str) -> None:
    group = getattr(Settings(), name)
    assert isinstance(group, GROUPS[name])
    described = describe(group)
    assert [row[0] for row in described] == [f.name for f in fields(group)]
    assert all(description.strip() for _, _, description in described), "a tuned number without a description"


def test_the_refusal_threshold_variable_sets_the_clear_miss_and_keeps_the_rest() -> None:
    settings = Settings.from_env({"ASSISTANT_REFUSAL_THRESHOLD": "0.3"})
    assert settings.refusal == RefusalSettings(clear_miss=0.3)
    assert Settings.from_env({}).refusal == RefusalSettings()
    with pytest.raises(SettingsError, match="ASSISTANT_REFUSAL_THRESHOLD=2 must be from 0 to 1"):
        Settings.from_env({"ASSISTANT_REFUSAL_THRESHOLD": "2"})
