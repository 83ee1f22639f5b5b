"""Intent signals by pattern (no LLM): greeting, question, temporal recency, memory-type hints,
entity mentions (paths, identifiers, names, dates), topic keywords, and the task it implies."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from nous.text import words

_GREETING = re.compile(
    r"^\s*(hey|hi|hello|hiya|howdy|sup|yo|good (morning|afternoon|evening)|what'?s up|thanks|"
    r"thank you)\b[\s!.,?]*(there|nous|all|everyone|team)?[\s!.,?]*$",
    re.I,
)
_SMALL_TALK = frozenset(
    """hey hi hello hiya howdy sup yo morning afternoon evening night good great thanks thank
    thx ty you a lot so much very that this it worked works working fixed did trick ok okay k cool
    nice awesome perfect excellent sounds appreciate appreciated it's its how's hows how are is
    going doing there all everyone team folks nous bye goodbye see later cheers np no problem
    welcome yes yeah yep sure got lol haha wow glad to be back again i'm im we're fine well
    happy monday friday weekend day today what's whats up new with""".split()
)
_SMALL_TALK_MAX_WORDS = 12


def small_talk(text: str) -> bool:
    """Greetings, thanks and pleasantries ("hey, good morning!", "hi there 👋", "thanks, that
    worked", "good morning! how are you?"): every word is small talk and there are few."""
    found = words.letters(text, apostrophes=True)
    if not found or len(found) > _SMALL_TALK_MAX_WORDS:
        return not found and bool(text.strip()) and not re.search(r"\w", text)
    return all(w in _SMALL_TALK for w in found)


_QUESTION = re.compile(
    r"(\?\s*$)|^\s*(what|where|when|why|how|who|which|can|could|should|is|are|do|does|did)\b", re.I
)
_RECENCY = [
    (re.compile(r"\b(today|just now|right now|currently|this morning)\b", re.I), 1.0),
    (re.compile(r"\b(yesterday|recently|this week|lately)\b", re.I), 0.8),
    (re.compile(r"\b(last week|few days ago|couple of days ago)\b", re.I), 0.5),
    (re.compile(r"\b(last month|a while ago|few weeks ago)\b", re.I), 0.3),
]
_HINTS = {
    "decision": re.compile(
        r"\b(what did (we|i) decide|decid\w*|decision|chose|choice|should we|recommend|"
        r"why (?:did|do|don'?t|are|aren'?t|were|is|isn'?t) (?:we|it)|instead of|rather than)",
        re.I,
    ),
    "procedure": re.compile(
        r"\b(how (do|to|can|should) (i|we)?|steps?|process|workflow|guide)\b", re.I
    ),
    "fact": re.compile(r"\b(what is|what are|tell me about|facts?|know about|definition)\b", re.I),
    "episode": re.compile(
        r"\b(last time|when did|history|what happened|previously|before)\b", re.I
    ),
    "constraint": re.compile(r"\b(never|must not|don'?t|forbidden|not allowed|avoid)\b", re.I),
    "preference": re.compile(r"\b(prefer\w*|like to|style|favou?rite)\b", re.I),
}
_PERMISSION = re.compile(
    r"\b(?:(?:can|could|may) (?:i|we)|should i|(?:is it|are we|am i) (?:ok|okay|fine|allowed|"
    r"safe|permitted)|allowed to|is (?:it|that) a problem if|"
    r"do (?:i|we) (?:really |still |actually |even )?(?:need|have) (?:to|an?)|"
    r"(?:is it|is that|is this|are they) (?:really )?(?:mandatory|required|necessary|compulsory|"
    r"enforced)|(?:must|have to|has to) (?:i|we)|(?:any|what) (?:rules?|restrictions?|"
    r"constraints?)|"
    # "Is an unsafe block OK here?", "ok to commit my notebook?": whether a thing is acceptable
    r"(?:is|are|would) (?:an?|the|this|that|these|those|my|our|it)\b[^.?!]{0,40}?\b(?:ok|okay|"
    r"fine|acceptable|allowed)(?![\w-])|(?:^|[.!?;,]\s*)(?:ok|okay|fine|alright) (?:to|if))\b",
    re.I,
)
"""A question that asks whether an action is allowed or required: the project's rules answer
it."""
_INTENDS = re.compile(
    r"\b(?:i (?:want|plan|intend|am going|'m going|am about|'m about) to|i(?:'d| would) like to)"
    r"(?! (?:know|understand|learn|see|find|ask|check|read)\b)|\bi'll (?:just )?(?!\w+ (?:you|up)\b)\w",
    re.I,
)
"""A message that says the action it is about to take ("I want to pull in the itertools crate",
"I'll just edit it") asks, unsaid, whether it may: the rules answer it as they answer "can I
…?", unless the message asks a question of its own ("I want to propose an ADR. Who reviews
it?" asks who reviews it: `_ASKS`)."""
_ASKS = re.compile(r"\b(?:what|how|who|whom|where|which|when|why)\b", re.I)
_PROPOSAL = re.compile(
    r"\b(?:should|shall|could|can|would|wouldn'?t|couldn'?t|shouldn'?t) (?:we|i|it|you)\b|"
    r"\bwhy (?:not|did|do|don'?t) (?:we|i)?\b|\bwhat about\b|\bhow about\b",
    re.I,
)
_ALTERNATIVE = [
    re.compile(
        r"\b(?P<verb>move|moving|migrate|migrating|switch|switching|port|porting|rewrite|rewriting|"
        r"convert|converting|replace|replacing|change|changing)\b[^?.!;:]*?\b(?:to|in|into|onto|"
        r"with|over to)\s+(?P<target>[^?.!,;:]+?)(?=\s*(?:[?.!,;:]|$)|\s+(?:so|because|since|"
        r"instead|for|to make|and)\b)",
        re.I,
    ),
    re.compile(r"\b(?:why not|what about|how about)\s+(?:just\s+)?(?:use\s+|using\s+|try\s+|"
               r"trying\s+|go(?:ing)? with\s+)?(?P<target>[^?.!,;:]+?)(?=\s*(?:[?.!,;:]|$)|"
               r"\s+(?:so|because|since|instead|for|to|and)\b)", re.I),
]  # fmt: skip
_ALTERNATIVE_WORDS = 3
"""A proposal names its alternative in a few words ("to Postgres", "in Python")."""


def alternative(text: str) -> list[str]:
    """The words of the alternative a proposal names, with its verb ("should we move the memory
    store to Postgres?" → move, Postgres): the decision that chose otherwise is about the
    subject and may never name the alternative, so these weigh less in the gate."""
    if not _PROPOSAL.search(text):
        return []
    for pattern in _ALTERNATIVE:
        found = pattern.search(text)
        if found:
            target = words.names(found.group("target"))
            if 0 < len(target) <= _ALTERNATIVE_WORDS:
                verb = found.groupdict().get("verb")
                return [verb, *target] if verb else target
    return []


_PATH = re.compile(r"(?<![\w/])(?:[\w.-]+/)*[\w-]+\.[a-zA-Z][\w]{0,5}\b")
_IDENT = re.compile(r"\b(?:[a-z]+_[a-z0-9_]+|[a-z]+[A-Z]\w+|[A-Z][a-z0-9]+[A-Z]\w+)\b")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z0-9]{2,}\b")
_DATE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|"
    r"dec)[a-z]*\.? \d{1,2}(st|nd|rd|th)?)\b",
    re.I,
)
_TASKS = [
    ("debugging", re.compile(r"\b(bug|error|exception|crash|fail\w*|debug\w*|traceback|fix)\b", re.I)),
    ("testing", re.compile(r"\b(tests?|pytest|unit test|coverage|assert\w*|fixture)\b", re.I)),
    ("documentation", re.compile(r"\b(docs?|documentation|readme|docstring|comment|changelog)\b", re.I)),
    ("architecture", re.compile(r"\b(architect\w*|design|structure|module|layer|schema|decid\w*)\b", re.I)),
    ("review", re.compile(r"\b(review\w*|pull request|pr\b|feedback on|critique)\b", re.I)),
]  # fmt: skip


class Intent(BaseModel):
    """What the input says about what to retrieve."""

    greeting: bool = False
    question: bool = False
    permission: bool = False
    alternative: list[str] = Field(default_factory=list)
    temporal_recency: float = 0.0
    hints: dict[str, float] = Field(default_factory=dict)
    entities: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    task: str | None = None

    @property
    def dominant_hint(self) -> str | None:
        return max(self.hints, key=lambda k: self.hints[k]) if self.hints else None


def signals(text: str) -> Intent:
    """Extract the intent signals of one input."""
    intent = Intent(
        greeting=bool(_GREETING.match(text)) or small_talk(text),
        question=bool(_QUESTION.search(text)),
        permission=bool(_PERMISSION.search(text))
        or bool(_INTENDS.search(text) and not _ASKS.search(text)),
        alternative=alternative(text),
    )
    for pattern, weight in _RECENCY:
        if pattern.search(text):
            intent.temporal_recency = max(intent.temporal_recency, weight)
    for kind, pattern in _HINTS.items():
        hits = len(pattern.findall(text))
        if hits:
            intent.hints[kind] = 0.5 * hits
    entities: list[str] = []
    for pattern in (_PATH, _IDENT, _DATE):
        entities += [m.group(0) for m in pattern.finditer(text)]
    stop = words.INTENT_STOP
    entities += [m.group(0) for m in _NAME.finditer(text) if m.group(0).lower() not in stop]
    intent.entities = list(dict.fromkeys(entities))[:20]
    intent.keywords = [w for w in dict.fromkeys(words.keywords(text)) if w not in stop][:12]
    for task, pattern in _TASKS:
        if pattern.search(text):
            intent.task = task
            break
    else:
        intent.task = "coding" if text.strip() and not intent.greeting else None
    return intent
