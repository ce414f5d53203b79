"""The bytes a terminal sends, as keys: text, Enter, the editing and paging keys."""

from __future__ import annotations

from clients.keys import KeyDecoder


def test_text_enter_and_editing_keys() -> None:
    keys = KeyDecoder().feed(b"f7\r\x7f\x08\t\x15\x0c\x04\x03")
    assert keys == ["f", "7", "enter", "backspace", "backspace", "tab", "ctrl-u", "ctrl-l",
                    "ctrl-d", "ctrl-c"]  # fmt: skip


def test_cr_lf_is_one_enter_and_a_lone_lf_is_one_too() -> None:
    assert KeyDecoder().feed(b"a\r\nb\n") == ["a", "enter", "b", "enter"]


def test_paging_and_arrow_sequences_with_or_without_modifiers() -> None:
    keys = KeyDecoder().feed(b"\x1b[5~\x1b[6~\x1b[A\x1bOB\x1b[1;5C\x1b[H\x1b[4~")
    assert keys == ["pgup", "pgdn", "up", "down", "right", "home", "end"]


def test_a_sequence_split_between_reads_is_held_until_it_ends() -> None:
    decoder = KeyDecoder()
    assert decoder.feed(b"\x1b[") == []
    assert decoder.feed(b"6") == []
    assert decoder.feed(b"~x") == ["pgdn", "x"]


def test_a_lone_escape_is_the_esc_key_and_unknown_sequences_are_dropped() -> None:
    decoder = KeyDecoder()
    assert decoder.feed(b"\x1b") == ["esc"]
    assert decoder.feed(b"\x1b[99~a") == ["a"]
    assert decoder.feed(b"\x1bq") == ["esc", "q"]


def test_utf8_split_between_reads_is_one_character() -> None:
    decoder = KeyDecoder()
    assert decoder.feed("é".encode()[:1]) == []
    assert decoder.feed("é".encode()[1:]) == ["é"]
