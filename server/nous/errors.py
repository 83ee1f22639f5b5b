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


class AmbiguousMemory(NousError):
    """An id prefix several memories share (as git says of a short sha): the candidates named."""

    def __init__(self, prefix: str, candidates: list[tuple[str, str, str]]) -> None:
        shown = "; ".join(f"{i} ({kind}) {micro[:60]}" for i, kind, micro in candidates)
        super().__init__(f"id {prefix!r} is ambiguous: it starts {shown}")
        self.prefix = prefix
        self.candidates = candidates


class InvalidMemory(NousError):
    """A memory to be written is malformed (empty text, unknown field value...)."""


class InvalidTransition(NousError):
    """A lifecycle transition the memory's kind does not allow."""

    def __init__(
        self, kind: str, current: str, target: str, allowed: tuple[str, ...] | None = None
    ) -> None:
        an = "an" if kind[:1].lower() in "aeiou" else "a"
        message = f"{an} {kind} that is {current!r} cannot become {target!r}"
        if allowed is not None:
            onward = ", ".join(repr(a) for a in allowed) if allowed else "nothing else"
            message += f" (from {current!r} it can become {onward})"
        super().__init__(message)
        self.kind = kind
        self.current = current
        self.target = target
