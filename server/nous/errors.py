"""Named errors raised by the inner modules; only `lsp/` and `cli` turn them into wire errors."""


class NousError(Exception):
    """Base class of every error Nous raises on purpose."""


class AssetError(NousError):
    """A model file, tokenizer or token encoding is missing or does not match its checksum."""


class StoreError(NousError):
    """The memory database cannot be opened or used."""


class UnknownMemory(NousError):
    """No memory has the given id."""

    def __init__(self, memory_id: str) -> None:
        super().__init__(f"no memory with id {memory_id!r}")
        self.memory_id = memory_id


class InvalidMemory(NousError):
    """A memory to be written is malformed (empty text, unknown field value...)."""


class InvalidTransition(NousError):
    """A lifecycle transition the memory's kind does not allow."""

    def __init__(self, kind: str, current: str, target: str) -> None:
        super().__init__(f"a {kind} cannot go from {current!r} to {target!r}")
        self.kind = kind
        self.current = current
        self.target = target
