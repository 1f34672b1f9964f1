"""The words papers use for what a practitioner says in shop talk: "cards" for GPUs, "prompt
processing" for prefill, "downclocking" for frequency scaling.

A question in the asker's own words and the abstract that answers it often share no content word:
"can we downclock each pool" and "dynamic voltage and frequency scaling" mean the same thing. The
lexical leg cannot bridge that, and MiniLM bridges only the common cases. Each rule below maps a
colloquial phrase to the terms ML-systems writing uses for it; the terms are added to the query the
lexical leg searches and to the words the offline answerer weighs sentences by (the question itself
is kept as asked). The list is general ML-systems vocabulary, not tied to any entry: a list is
easier to audit than a learned expansion, and a wrong rule costs a ranking or the choice of a
sentence, never an answer's wording (answers quote the entries).

Only the lexical leg searches with the added terms. Added to the dense query and the re-ranker's as
well, they lifted the calibration sets (realistic-dev answered with gold 0.757 -> 0.821) but lost a
question on the test half (recall@5 0.835 -> 0.829): a word such as "quantization" added to a
question about switching FP16 to FP8 pulls every quantization paper towards it, and BM25's term
weights absorb that where a pooled vector or MaxSim's mean over query pieces does not.
"""

from __future__ import annotations

import re

# terms the literature uses -> phrases a question may say it with (regular expressions, lower case,
# each matched as whole words)
USER_TERMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # hardware
    ("gpu gpus", (r"(?:graphics )?cards?",)),
    ("node nodes server", (r"(?:boxes|box)",)),
    (
        "frequency scaling dvfs",
        (r"downclock\w*", r"underclock\w*", r"clock (?:speeds?|rates?|frequenc\w*)", r"clocks? (?:\w+ )?down"),
    ),
    ("energy power consumption", (r"power bills?", r"electricity", r"watts?", r"power draw\w*")),
    ("mobile devices edge", (r"phones?", r"smartphones?", r"handsets?")),
    ("consumer edge devices", (r"laptops?", r"at home", r"household", r"home (?:machines?|computers?|pcs?)")),
    ("wireless network", (r"wi-?fi",)),
    ("quantum", (r"qubits?", r"quantum (?:chips?|hardware|computers?|processors?)")),
    ("cpu memory host", (r"host (?:ram|memory)", r"system ram", r"cpu ram")),
    (
        "ssd storage",
        (r"nvme", r"ssds?", r"disks?", r"(?:fast|slow|dead|failed|local|hard|flash|nvme|ssd|storage) drives?"),
    ),
    ("cluster", (r"cluster of", r"fleet")),
    # serving
    ("llm serving", (r"chat ?bots?", r"chat (?:model|service|serving|app|assistant)s?", r"assistants?")),
    (
        "prefill",
        (
            r"prompt[- ]processing",
            r"processing (?:the )?prompts?",
            r"reading (?:the )?prompts?",
            r"ingest\w* (?:the )?prompts?",
        ),
    ),
    (
        "decode decoding",
        (r"token generation", r"generat\w+ (?:the )?(?:tokens|output|reply|replies|answers?)", r"generation[- ]only"),
    ),
    (
        "output length",
        (
            r"(?:replies|reply|responses?|answers?|outputs?) (?:length|lengths|long|size)",
            r"how (?:long|much more text)",
        ),
    ),
    (
        "slo slos",
        (r"latency (?:targets?|guarantees?|promises?|budgets?|goals?)", r"response[- ]time (?:targets?|guarantees?)"),
    ),
    (
        "bursty workload",
        (r"spik\w+", r"bursts?", r"bursty", r"peaks", r"peak (?:traffic|load|hours?)", r"traffic peak"),
    ),
    (
        "serverless",
        (
            r"lambda",
            r"cloud functions?",
            r"pay[- ]per[- ](?:invocation|call|request)",
            r"function[- ](?:platforms?|as[- ]a[- ]service)",
            r"faas",
        ),
    ),
    (
        "speculative decoding",
        (r"draft (?:guesses|tokens|model)", r"guess\w* (?:the )?(?:next )?tokens?", r"guess\w* ahead"),
    ),
    ("kv cache", (r"key/value", r"key-value (?:buffer|store|cache)", r"kv (?:buffer|store)", r"keys and values")),
    ("long context", (r"long (?:prompts?|documents?|inputs?)", r"\d+[km]-token")),
    (
        "rag retrieval",
        (r"document (?:index|search|store)", r"vector (?:db|database|index|store)", r"retrieval[- ]augmented"),
    ),
    ("offloading", (r"streams? (?:the )?layers?", r"spill\w*")),
    ("ttft time to first token", (r"first token",)),
    ("cold start", (r"cold[- ]?starts?", r"spin(?:ning)? up", r"startup time", r"load(?:ing)? (?:the )?weights")),
    ("lora peft parameter-efficient fine-tuning", (r"adapters?", r"lora")),
    ("multi-tenant", (r"customers", r"tenants?", r"several (?:teams|users|models) share")),
    # training
    ("bubbles idle utilization", (r"idle", r"doing nothing", r"sit\w* around", r"waiting on")),
    ("preemptible spot instances", (r"spot (?:instances?|gpus?|vms?)", r"preempt\w*", r"interruptible")),
    ("failure fault tolerance", (r"crash\w*", r"dies", r"died", r"goes down", r"hardware fail\w*")),
    ("reinforcement learning rl rollout", (r"grpo", r"ppo", r"rlhf", r"rollouts?")),
    ("stragglers", (r"slow (?:workers?|nodes?|gpus?|machines?)", r"stragglers?", r"laggards?")),
    ("memory oom", (r"out of memory", r"ooms?", r"ooming")),
    ("activation recomputation checkpointing", (r"recompute", r"recomputation", r"re-?running the forward")),
    ("distributed training", (r"multi-?node", r"many machines", r"many gpus", r"thousands of gpus")),
    (
        "federated learning",
        (
            r"on-?device learning",
            r"train\w* on (?:the )?(?:phones?|devices?)",
            r"across sites",
            r"without (?:sharing|pooling) (?:the )?data",
        ),
    ),
    (
        "personalized personalization",
        (r"tailor\w*", r"personali[sz]\w*", r"per-(?:user|client|device) (?:models?|versions?)"),
    ),
    # model compression and sparsity
    ("quantization", (r"\d+-bit", r"lower precision", r"fewer bits")),
    ("pruning sparsity", (r"zero(?:ed|ing)? out", r"prun\w+", r"remov\w+ (?:weights|parameters)")),
    ("unstructured", (r"scattered", r"irregular")),
    (
        "mixture of experts moe",
        (r"experts?", r"few (?:billion )?param\w* (?:firing|active)", r"sparse (?:model|llm)", r"active param\w*"),
    ),
    ("routing", (r"router", r"gating")),
    ("load imbalance balancing", (r"hot ?spots?", r"busy experts?", r"uneven load")),
    # systems tooling
    ("simulator simulation", (r"mimic\w*", r"in software", r"what-?if", r"emulat\w+")),
    ("fragmentation", (r"reserved[- ]but[- ]unusable", r"unusable memory", r"wasted memory", r"holes in memory")),
    ("replication mirroring", (r"duplicate", r"mirror\w*")),
    ("tiered storage hierarchy", (r"fast and (?:the )?slow (?:drives?|storage|memory|tiers?)", r"tiers?")),
    # learning settings
    (
        "one-shot learning",
        (r"one (?:labeled |labelled )?(?:example|photo|image|sample)", r"single (?:labeled |labelled )?example"),
    ),
    ("few-shot learning", (r"a (?:few|handful of) (?:labeled |labelled )?(?:examples|photos|images|samples)",)),
    ("proxy", (r"stands? in for", r"stand-in")),
    # chat shorthand: the word written out, as abstracts write it
    ("attention", (r"attn",)),
    ("memory", (r"mem",)),
    ("gpu memory", (r"vram",)),
    ("gradient gradients", (r"grads?",)),
    ("probabilities", (r"probs",)),
    ("function", (r"fns?",)),
    ("parameters", (r"params?",)),
    ("requests", (r"reqs?",)),
    ("performance", (r"perf",)),
    ("library libraries", (r"libs?",)),
    ("service", (r"svcs?",)),
    ("process", (r"procs?",)),
    ("operators", (r"ops",)),
    ("throughput tokens", (r"tok/s", r"tokens?/s(?:ec)?", r"toks?")),
    ("database", (r"dbs?",)),
    ("communication", (r"comms?",)),
    ("configuration", (r"configs?",)),
    ("environment", (r"envs?",)),
    ("asynchronous", (r"async",)),
    ("hardware", (r"hw",)),
    ("infrastructure", (r"infra",)),
    ("bandwidth", (r"bw",)),
    ("production", (r"prod",)),
    ("implementation", (r"impl",)),
    ("sequence sequences", (r"seqs?",)),
    ("context", (r"ctx",)),
    ("utilization", (r"util",)),
    ("allocation", (r"alloc",)),
)
_RULES = tuple((re.compile(rf"\b(?:{'|'.join(phrases)})\b"), terms) for terms, phrases in USER_TERMS)


def literature_terms(question: str) -> list[str]:
    """The terms the literature uses for what the question says in its own words, in rule order."""
    lowered = question.lower()
    found: list[str] = []
    for pattern, terms in _RULES:
        if pattern.search(lowered):
            found.extend(t for t in terms.split() if t not in found)
    return found


def with_literature_terms(question: str) -> str:
    """The question followed by the terms it implies and does not already use."""
    lowered = question.lower()
    extra = [t for t in literature_terms(question) if not re.search(rf"\b{re.escape(t)}\b", lowered)]
    return f"{question} {' '.join(extra)}" if extra else question
