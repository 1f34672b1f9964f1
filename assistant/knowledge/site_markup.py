"""The markup a documentation site's generator reads and a reader of the page never sees, taken out.

Documentation folders are written for a site generator, not for a Markdown parser alone: GitBook's
`{% hint style="info" %}` and `{% code title="feature_store.yaml" %}`, Jekyll's Liquid `{{ site.x }}`
and kramdown's `{: .notice--info}`, Hugo's `{{< alert >}}` and `{{% note %}}`, MkDocs' `!!! note
"Title"` admonitions, Docusaurus' `:::tip` fences, attribute lists after an image
(`![](logo.png){ align="center" }`), a heading or a paragraph (`## Install { #install }`, `[](){ #anchor }`),
Hugging Face's doc-builder directives (`[[autodoc]] Name`) and API links (`[`~PeftModel.save_pretrained`]`,
shown as `save_pretrained`), GitHub's alerts (`> [!WARNING]`, shown as a "Warning" callout) and an MDX
page's `import` / `export` lines and `{/* comments */}`.
Parsed as Markdown they become words of the section, and an answer quoted `{% code
title="feature_store.yaml" %}`. Here the tags go, an admonition keeps its title, and what the tags
wrap stays. Lines are kept (a tag line becomes an empty line) so sections still start on the lines the
file has, and fenced code is left as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# one attribute of Python-Markdown's attribute list, as MkDocs sites write after a heading, a paragraph or a
# link: an id (#install), a class (.md-button) or a key and its value (width="120"); a kubectl JSONPath such as
# {.status.url} is none (a class has no dot inside)
ATTRIBUTE = r"""(?:[#.][A-Za-z_][\w-]*|[\w-]+=(?:"[^"\n]*"|'[^'\n]*'|[^\s{}"']+))(?=[ \t}])"""
# one pattern for every inline form; each part is bounded, so a line of unclosed braces is read once
TAG = re.compile(
    r"\{%-?[^%\n]{0,300}?-?%\}"  # Liquid / GitBook / Jinja block tags: {% hint %}, {%- include x -%}
    r"|\{\{[<%][^\n]{0,300}?[>%]\}\}"  # Hugo shortcodes: {{< alert >}}, {{% /note %}}
    r"|\{\{[^{}\n]{0,300}\}\}"  # Liquid output: {{ site.press_release_v3 }}
    r"|\{:[^{}\n]{0,300}\}"  # kramdown attribute lists: {: .notice--info}
    r"|(?<=\))[ \t]?\{[^{}\n]{0,300}=[^{}\n]{0,300}\}"  # attributes after an image or link: ){ align="center" }
    # attribute lists with an id or a class: { #install .wide }, {#disable-top-level-vs}
    rf"|[ \t]?\{{(?=[^{{}}\n]{{0,300}}[#.][A-Za-z_])[ \t]*{ATTRIBUTE}(?:[ \t]+{ATTRIBUTE}){{0,20}}[ \t]*\}}"
    r"|\[\[(?:autodoc|open-in-colab)\]\]"  # Hugging Face doc-builder directives: [[autodoc]] Accelerator
)
# a Hugo site parameter in a command, `{{< param "version" >}}`: the page shows the release there; a fenced
# command keeps it as a placeholder, `<version>`, the way documentation writes a value to fill in
PARAMETER = re.compile(r"\{\{[<%]\s*params?\s+\"?(?P<name>[\w.-]{1,60})\"?\s*[>%]\}\}")
# "!!! note "Title"", "??? tip", ":::warning Careful", ":::": the marker goes, a title stays; MkDocs' content
# tab, `=== "pip"`, keeps its name
ADMONITION = re.compile(r"^(?P<indent>\s*)(?P<marker>!!!|\?\?\?\+?|:{3,}|===\+?(?=\s))\s*(?P<rest>.*)$")
# GitHub's alert, a blockquote opened by `> [!TIP]` (also `NOTE`, `IMPORTANT`, `WARNING`, `CAUTION`): the site
# shows the kind as the callout's title, "Tip", and the quote under it; the marker is no word of the page
ALERT = re.compile(r"^(?P<quote>\s*(?:>\s*)+)\[!(?P<kind>note|tip|important|warning|caution)\](?P<rest>.*)$", re.I)
# Hugging Face doc-builder's link to an API object, [`~peft.PeftModel.save_pretrained`] or [`LoraConfig`]: the
# site shows the name as code, its last part only after a tilde; a real link, [`name`](url) or a reference
# definition's label, [`name`]: url, is not one
API_LINK = re.compile(r"\[`(?P<tilde>~?)(?P<name>[A-Za-z_][\w.]*(?:\(\))?)`\](?![(\[])")
# a component's opening or closing tag alone on its line: JSX's `<Tip warning={true}>`, `</TabItem>` (a
# capitalised word with lower-case letters, not a placeholder such as `<NUM_GPUS>`), Hugging Face's
# `<hfoption id="EVA">`
COMPONENT_TAG = re.compile(r"^\s*<(?P<closing>/?)(?P<name>[A-Z][a-z]\w*(?:\.\w+)*|hf[a-z]+)(?:\s[^<>]*)?>\s*$")
BODY_INDENT = 4  # what an admonition's, a content tab's or a component's body is indented by
FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")  # a code fence's opening or closing run (the reader's too)
# MkDocs' snippet include, `--8<-- "examples/wf.yaml:12"` (or a bare `--8<--` around a list of files): the site
# shows the file there, which the folder indexed may not hold; the directive is no text of the page
SNIPPET = re.compile(r"^\s*-{2,}8<-{2,}(?:\s+(?P<file>\"[^\"\n]*\"|'[^'\n]*'|\S+))?\s*$")
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
    and its comments; its components are tags the Markdown reader already reads past.

    The body of an admonition or a content tab (MkDocs), indented four spaces under its marker, and of a
    component (`<Tip>`, whose Hugging Face pages indent it so) is taken out of its indentation: Markdown reads
    four indented spaces as code, so an admonition's second paragraph was quoted as a code block, and its
    fenced commands as a block showing their fences."""
    out = []
    fence = ""
    bodies: list[Body] = []  # the open bodies, innermost last
    listing = False  # inside a bare `--8<--` ... `--8<--` list of files to include
    for line in text.split("\n"):
        if line.strip():
            # an admonition's body ends at a line indented less than it; a component's body is indented only if
            # its first line is (KServe's `<TabItem>` holds YAML at the margin, whose indentation is its own)
            while bodies and not bodies[-1].component and indentation(line) < bodies[-1].shift:
                bodies.pop()
            if bodies and bodies[-1].shift < 0:
                outer = bodies[-2].shift if len(bodies) > 1 else 0
                bodies[-1].shift = outer + BODY_INDENT * (indentation(line) >= outer + BODY_INDENT)
        line = dedented(line, max(bodies[-1].shift, 0) if bodies else 0)
        opening = FENCE.match(line)
        snippet = SNIPPET.match(line)
        if snippet and not snippet.group("file"):  # a bare marker opens and closes a list of files, a path a line
            listing = not listing
        elif listing and not line.strip():  # the list is one paragraph: an unclosed marker hides no more
            listing = False
        if listing or snippet:
            out.append("")
            continue
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            out.append(PARAMETER.sub(r"<\g<name>>", line))
            continue
        if opening:
            fence = opening.group(1)
            out.append(line)
            continue
        shift = max(bodies[-1].shift, 0) if bodies else 0
        component = COMPONENT_TAG.match(line)
        if component and component.group("closing"):
            while bodies and bodies[-1].component and bodies.pop().component != component.group("name"):
                pass
        elif component:
            bodies.append(Body(-1, component.group("name")))  # its shift is read off its first line
        admonition = ADMONITION.match(line)
        if admonition:
            out.append(admonition.group("indent") + admonition_title(admonition.group("rest")))
            if not admonition.group("marker").startswith(":"):  # Docusaurus' `:::` closes its own body
                bodies.append(Body(shift + len(admonition.group("indent")) + BODY_INDENT))
            continue
        if alert := ALERT.match(line):
            rest = alert.group("rest").strip()
            line = f"{alert.group('quote')}{alert.group('kind').capitalize()}:{' ' if rest else ''}{rest}"
        line = API_LINK.sub(api_name, line)
        line = outside_code_spans(line, lambda words: TAG.sub("", words))
        out.append(MDX_ONLY.sub("", line) if mdx else line)
    return "\n".join(out)


def api_name(link: re.Match[str]) -> str:
    """A doc-builder API link as the site shows it: `` `save_pretrained` `` for [`~peft.PeftModel.save_pretrained`]."""
    if not link.string[: link.start()].strip() and link.string[link.end() : link.end() + 1] == ":":
        return link.group()  # a reference definition: [`name`]: url
    name = link.group("name")
    return f"`{name.rsplit('.', 1)[-1] if link.group('tilde') else name}`"


@dataclass
class Body:
    """An admonition's, a content tab's or a component's body: the columns of indentation its lines lose (-1
    for a component until its first line is read), and the component's name ("" for an admonition or a tab)."""

    shift: int
    component: str = ""


def indentation(line: str) -> int:
    """The columns of the line's leading blanks, a tab reaching the next multiple of four."""
    return len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(BODY_INDENT))


def dedented(line: str, shift: int) -> str:
    """The line without as many of its leading blanks as fill at most `shift` columns."""
    taken = 0
    while taken < len(line) and line[taken] in " \t" and len(line[: taken + 1].expandtabs(BODY_INDENT)) <= shift:
        taken += 1
    return line[taken:]


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
