"""The markup a documentation site's generator reads and a reader of the page never sees, taken out.

Documentation folders are written for a site generator, not for a Markdown parser alone: GitBook's
`{% hint style="info" %}` and `{% code title="feature_store.yaml" %}`, Jekyll's Liquid `{{ site.x }}`
and kramdown's `{: .notice--info}`, Hugo's `{{< alert >}}` and `{{% note %}}`, MkDocs' `!!! note
"Title"` admonitions, Docusaurus' `:::tip` fences, attribute lists after an image
(`![](logo.png){ align="center" }`), Hugging Face's doc-builder directives (`[[autodoc]] Name`) and an MDX
page's `import` / `export` lines and `{/* comments */}`.
Parsed as Markdown they become words of the section, and an answer quoted `{% code
title="feature_store.yaml" %}`. Here the tags go, an admonition keeps its title, and what the tags
wrap stays. Lines are kept (a tag line becomes an empty line) so sections still start on the lines the
file has, and fenced code is left as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# one pattern for every inline form; each part is bounded, so a line of unclosed braces is read once
TAG = re.compile(
    r"\{%-?[^%\n]{0,300}?-?%\}"  # Liquid / GitBook / Jinja block tags: {% hint %}, {%- include x -%}
    r"|\{\{[<%][^\n]{0,300}?[>%]\}\}"  # Hugo shortcodes: {{< alert >}}, {{% /note %}}
    r"|\{\{[^{}\n]{0,300}\}\}"  # Liquid output: {{ site.press_release_v3 }}
    r"|\{:[^{}\n]{0,300}\}"  # kramdown attribute lists: {: .notice--info}
    r"|(?<=\))[ \t]?\{[^{}\n]{0,300}=[^{}\n]{0,300}\}"  # attributes after an image or link: ){ align="center" }
    r"|\[\[(?:autodoc|open-in-colab)\]\]"  # Hugging Face doc-builder directives: [[autodoc]] Accelerator
)
# "!!! note "Title"", "??? tip", ":::warning Careful", ":::": the marker goes, a title stays
ADMONITION = re.compile(r"^(?P<indent>\s*)(?:!!!|\?\?\?\+?|:{3,})\s*(?P<rest>.*)$")
FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")  # a code fence's opening or closing run (the reader's too)
# MDX (Docusaurus, Hugging Face): the page's own JavaScript imports and exports, and {/* comments */}
MDX_ONLY = re.compile(r"^(?:import|export)\s.*$|\{/\*.*?\*/\}")


def admonition_title(rest: str) -> str:
    """What an admonition line says besides its marker: its quoted title, else the words after its type
    (`note "Before you start"` -> "Before you start"; `tip Careful` -> "Careful"; `note` -> "")."""
    quoted = re.search(r"[\"“](.+?)[\"”]", rest)
    if quoted:
        return quoted.group(1)
    words = rest.split(None, 1)
    return words[1] if len(words) == 2 else ""


def without_site_markup(text: str, mdx: bool = False) -> str:
    """The text with template tags, attribute lists and admonition markers taken out, line for line;
    fenced code blocks are left as they are. An MDX page (`mdx`) also loses its import and export lines
    and its comments; its components are tags the Markdown reader already reads past."""
    out = []
    fence = ""
    for line in text.split("\n"):
        opening = FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            out.append(line)
            continue
        if opening:
            fence = opening.group(1)
            out.append(line)
            continue
        admonition = ADMONITION.match(line)
        if admonition:
            out.append(admonition.group("indent") + admonition_title(admonition.group("rest")))
            continue
        line = outside_code_spans(line, lambda words: TAG.sub("", words))
        out.append(MDX_ONLY.sub("", line) if mdx else line)
    return "\n".join(out)


# an inline code span: a run of backticks, then anything up to a run of the same length
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)")


def outside_code_spans(line: str, change: Callable[[str], str]) -> str:
    """The line with `change` applied to its words outside inline code spans: a span shows syntax as written
    (Argo's `{{ tasks.log-int.outputs.result }}`, a Jinja `{% if %}` in a how-to), which is what an answer
    quotes; taken out, it also left an empty span whose backticks swallowed the rest of the line."""
    out, start = [], 0
    for span in CODE_SPAN.finditer(line):
        out += [change(line[start : span.start()]), span.group()]
        start = span.end()
    return "".join([*out, change(line[start:])])
