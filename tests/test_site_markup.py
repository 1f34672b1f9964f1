"""A documentation site's generator markup never reaches an entry or an answer.

GitBook, Jekyll/Liquid, kramdown, Hugo, MkDocs and Docusaurus pages, written here, read by the real
Markdown reader, indexed and answered by the offline model.
"""

from __future__ import annotations

from pathlib import Path

from assistant import Assistant, Settings
from assistant.knowledge.markdown_reader import read_markdown
from assistant.knowledge.site_markup import without_site_markup
from tests.conftest import documents_assistant_of

PAGE = """---
title: Online store
layout: single
---

# Online store

{% hint style="info" %}
The online store serves the latest feature values at low latency.
{% endhint %}

{: .notice--info}
Deployments on {{ site.cloud }} use Redis.

![](./assets/logo.png){ align="center" width="120" }

## Configure Redis

!!! note "Before you start"
    Create the Redis instance first.

:::tip
Set `connection_string` in feature_store.yaml to reach Redis.
:::

{% code title="feature_store.yaml" %}
```yaml
online_store:
  type: redis
  connection_string: "localhost:6379"
```
{% endcode %}

{{< alert >}}Redis keys expire after the TTL of the feature view.{{< /alert >}}

[[autodoc]] RedisOnlineStoreConfig
"""

MARKUP = ("{%", "%}", "{{", "}}", "{:", "!!!", ":::", "align=", "![", "[[")


def test_the_generator_markup_goes_and_what_it_wraps_stays() -> None:
    document = read_markdown(PAGE)
    text = "\n".join(s.text for s in document.sections)
    assert not [m for m in MARKUP if m in text], text
    assert "The online store serves the latest feature values" in text
    assert "Redis keys expire after the TTL" in text and "Before you start" in text
    assert 'connection_string: "localhost:6379"' in text  # the code block as written
    assert document.sections[-1].heading.endswith("Configure Redis")
    assert "RedisOnlineStoreConfig" in text  # a doc-builder directive goes, the name it documents stays


def test_lines_and_fenced_code_are_kept() -> None:
    text = '{% hint %}\nwords\n```\n{% raw %} {{ kept }}\n```\n!!! warning "Careful"\n'
    cleaned = without_site_markup(text)
    assert cleaned.count("\n") == text.count("\n")  # sections still start on the file's lines
    assert "{% raw %} {{ kept }}" in cleaned and "Careful" in cleaned and "{% hint %}" not in cleaned
    assert without_site_markup("{" * 10_000 + "%") == "{" * 10_000 + "%"  # unclosed braces: read once, kept


def test_a_docusaurus_admonition_keeps_its_bracketed_title() -> None:
    """Docusaurus' `:::tip[Expected Output]` kept the last word of its title and the bracket: "Output]"."""
    page = ":::tip[Expected Output]\n```bash\nNAME   READY\n```\n:::\n\n:::note Plain title\nWords.\n:::\n"
    lines = without_site_markup(page).split("\n")
    assert lines[0] == "Expected Output" and "Plain title" in lines, lines


def test_template_syntax_in_inline_code_is_what_the_page_shows() -> None:
    """Argo writes its expression syntax in code spans: taken out, the sentence lost its answer, and the empty
    span's backticks swallowed the rest of the line with its link syntax."""
    line = (
        "The result is accessible as `{{ tasks.log-int.outputs.result }}`. If using [steps](steps.md), "
        "substitute `tasks` for `steps`: `{{ steps.log-int.outputs.result }}`. Deployments on {{ site.cloud }} "
        "use ``{% if %}`` blocks."
    )
    text = read_markdown(f"# Outputs\n\n{line}\n").sections[-1].text
    assert "accessible as {{ tasks.log-int.outputs.result }}. If using steps, substitute" in text, text
    assert "{{ steps.log-int.outputs.result }}" in text and "{% if %}" in text
    assert "](" not in text and "site.cloud" not in text  # a link reads as its words; a tag outside code goes


def test_a_hugo_parameter_in_a_fenced_command_is_a_placeholder() -> None:
    """Kueue's install commands name the release by a site parameter: quoted as written, the URL held
    `{{< param "version" >}}`; the command now shows where the release goes, as a value to fill in."""
    text = (
        '```shell\nhelm install kueue https://example.org/download/{{< param "version" >}}/kueue-'
        '{{< param "chart_version" >}}.tgz\nVERSION={{% param version %}}\n```\n'
    )
    cleaned = without_site_markup(text)
    assert "https://example.org/download/<version>/kueue-<chart_version>.tgz" in cleaned, cleaned
    assert "VERSION=<version>" in cleaned and "{{" not in cleaned
    assert without_site_markup("```\n{{< highlight go >}}\n```") == "```\n{{< highlight go >}}\n```"  # other tags


def test_markdown_inside_a_components_html_block_reads_as_its_words() -> None:
    """CommonMark ends an HTML block at a blank line, so the line right after a component's opening tag is
    part of it: its link was quoted as written, `[EVA](https://...)`."""
    page = (
        '# LoRA\n\n## Initialization\n\n<hfoption id="EVA">\n[EVA](https://example.org/papers/2410.07170) '
        "performs SVD on the input activations, see ![the diagram](svd.png).\n\nSet `init_lora_weights` to eva.\n"
        "</hfoption>\n"
    )
    text = read_markdown(page).sections[-1].text
    assert "EVA performs SVD on the input activations, see the diagram." in text, text
    assert "](" not in text and "<hfoption" not in text and "Set init_lora_weights to eva." in text


def test_what_a_page_comments_out_is_not_read() -> None:
    """DeepSpeed's tutorial keeps an old launch recipe in an HTML comment, blank lines and commands included;
    its words were read as the section's (through the first `>` inside it, the rest of it too)."""
    page = (
        "# Tutorial\n\n## Launch\n\nUse the deepspeed launcher.\n\n<!-- Old recipe, see <NUM_GPUS> below.\n\n"
        "```shell\nmpirun -np 32 bash run_old.sh\n```\n-->\n\nThen check the logs.\n"
    )
    text = read_markdown(page).sections[-1].text
    assert "Use the deepspeed launcher." in text and "Then check the logs." in text, text
    assert "Old recipe" not in text and "mpirun" not in text and "-->" not in text, text
    inline = read_markdown("# T\n\n## S\n\nUse the flag <!-- not --old-flag > anymore --> to start.\n").sections[-1]
    assert inline.text.strip() == "Use the flag  to start.", inline.text  # a comment inside a paragraph too


INDENTED_BODIES = """# Cron workflows

## Stopping

!!! Warning "Scheduling vs. Completions"
    The number of completions can exceed the configured maximum.

    If the `Workflow` takes 90 seconds to run, the `CronWorkflow` will stop after two completions.

    ```yaml
    stopStrategy:
      expression: "cronworkflow.succeeded >= 1"
    ```

=== "pip"

    Install it with pip.

<Tip warning={true}>

    This guide assumes that you have read the [usage guide](./usage.md).

</Tip>

<TabItem value="yaml" label="YAML">

```yaml
data:
  router: |-
    {"headers": {"propagate": ["Authorization"]}}
```

</TabItem>

    an indented code block
"""


def test_an_indented_body_of_an_admonition_a_tab_or_a_component_is_read_as_text() -> None:
    """MkDocs indents an admonition's and a content tab's body four spaces, Hugging Face a `<Tip>`'s: read as
    Markdown, its second paragraph was a code block, and its fenced YAML a block showing its fences."""
    text = read_markdown(INDENTED_BODIES).sections[-1].text
    assert "If the Workflow takes 90 seconds to run, the CronWorkflow will stop after two completions." in text, text
    assert '```yaml\nstopStrategy:\n  expression: "cronworkflow.succeeded >= 1"\n```' in text, text
    assert "pip\n\nInstall it with pip." in text and "=== " not in text
    assert "This guide assumes that you have read the usage guide." in text
    # a component whose body starts at the margin keeps its block's indentation, which is the YAML's own
    assert '```yaml\ndata:\n  router: |-\n    {"headers": {"propagate": ["Authorization"]}}\n```' in text, text
    assert "```\nan indented code block\n```" in text  # outside any body, indented code is code
    placeholder = read_markdown("# Run\n\n## Args\n\n<NUM_GPUS>\n\n    deepspeed train.py\n").sections[-1].text
    assert "```\ndeepspeed train.py\n```" in placeholder, placeholder  # a placeholder opens no component
    assert text.count("```") == 6, text


def test_an_mkdocs_snippet_include_is_no_text_and_leaves_no_empty_block() -> None:
    """Argo's pages show an example file through `--8<-- "examples/wf.yaml:12"` inside a fence: the folder does
    not hold the file, and the directive was the block's only line."""
    page = (
        '# Sync\n\n## Level\n\nUsing a semaphore:\n\n```yaml title="examples/wf.yaml"\n--8<-- "examples/wf.yaml:12"\n'
        "```\n\n--8<--\nincludes/abbreviations.md\n--8<--\n\nThen submit it.\n"
    )
    text = read_markdown(page).sections[-1].text
    assert "8<" not in text and "```" not in text, text
    assert "Using a semaphore:" in text and "Then submit it." in text and "abbreviations" not in text
    unclosed = read_markdown("# T\n\n## S\n\n--8<--\nincludes/a.md\n\nThe page goes on.\n").sections[-1].text
    assert unclosed.strip() == "The page goes on.", unclosed  # a marker left open hides one paragraph at most


def test_a_snippet_files_named_parts_are_its_sections() -> None:
    """MkDocs sites keep text several pages include in a file of named parts (`install.inc.md`, included as
    `--8<-- "install.inc.md:requirements"`); the marks were read as headings, "--8<-- [start:requirements]",
    the page's title and its sections' names. A page with headings of its own keeps a part in its section."""
    parts = read_markdown(
        "# --8<-- [start:requirements]\n\n- GPU: compute capability 7.0 or higher\n\n# --8<-- [end:requirements]\n"
        "<!-- --8<-- [start:set-up-using-python] -->\n\n### Create an environment\n\nUse uv.\n\n"
        "<!-- --8<-- [end:set-up-using-python] -->\n# --8<-- [start:build-wheel]\n\nRun `pip install -e .`.\n"
    )
    assert parts.title == "", parts.title
    headings = [(s.heading, s.line) for s in parts.sections if s.text]
    assert headings == [
        ("Requirements", 1),
        ("Set up using python › Create an environment", 8),
        ("Build wheel", 13),
    ], headings
    assert not any("8<" in s.text for s in parts.sections)
    page = read_markdown(
        "# Deploy\n\nIntro.\n\n<!-- --8<-- [start:docker] -->\nRun the image.\n<!-- --8<-- [end:docker] -->\n\n"
        "```python\n# --8<-- [start:example]\nllm = LLM('m')\n# --8<-- [end:example]\n```\n\n"
        ";--8<-- [start:escaped] stays\n"
    )
    assert [s.heading for s in page.sections] == [""], page.sections
    text = page.sections[0].text
    assert "Intro.\n\nRun the image." in text and "```python\nllm = LLM('m')\n```" in text, text
    assert text.count("8<") == 1, text  # only the escaped mark, which the site shows


def test_a_pages_own_style_or_script_is_no_text() -> None:
    """MkDocs pages style their tables in a <style> block; its rules were read as the section's first words."""
    page = read_markdown(
        "# Cases\n\n<style>\n    table th{\n        background: #C1E6FE;\n    }\n</style>\n\n"
        "<script>\nwindow.track('cases');\n</script>\n\n| Case | Model |\n|---|---|\n| Burgers | MLP |\n"
    )
    text = "\n".join(section.text for section in page.sections)
    assert "background" not in text and "track" not in text, text
    assert "| Burgers | MLP |" in text


def test_answers_quote_no_markup(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "online-store.md").write_text(PAGE, encoding="utf-8")
    bot = Assistant(Settings(home=tmp_path / "home", knowledge=(folder,), model="extractive"), auto_index=False)
    bot.index(progress=False)
    for question in ("What does the online store serve?", "How do I configure the Redis online store?"):
        answer = bot.ask(question)
        assert not answer.refused, answer.text
        assert not [m for m in MARKUP if m in answer.text], answer.text


HF_PAGE = """# Saving adapters

Call [`~peft.PeftModel.save_pretrained`] to write the adapter; [`LoraConfig`] is saved with it as
adapter_config.json. See the [`save_pretrained`](https://huggingface.co/docs/peft) reference too.
Merge first with [`~LoraModel.merge_and_unload()`], then load it with [`~PeftModel.from_pretrained`]:

> [!WARNING]
> Saving with DeepSpeed ZeRO-3 needs the weights gathered on one rank first.

> [!TIP] A saved adapter is a few megabytes, not the whole model.

```python
model.save_pretrained("out")  # [`~kept`] as written in code
```
"""


def test_github_alerts_and_doc_builder_api_links_read_as_their_sites_show_them() -> None:
    """`> [!WARNING]` and [`~peft.PeftModel.save_pretrained`] were quoted as written: "[!WARNING] Saving with
    ...", "Call [~peft.PeftModel.save_pretrained] to write ..."; the sites show a "Warning" callout and the name."""
    text = "\n".join(s.text for s in read_markdown(HF_PAGE).sections)
    assert "Call save_pretrained to write the adapter; LoraConfig is saved with it" in text, text
    assert "Warning: Saving with DeepSpeed ZeRO-3 needs the weights gathered" in text, text
    assert "Tip: A saved adapter is a few megabytes" in text, text
    assert "See the save_pretrained reference too." in text, text  # a real link: its text
    assert "Merge first with merge_and_unload(), then load it with from_pretrained:" in text, text
    assert "[!" not in text and "[~" not in text and "[LoraConfig]" not in text, text
    assert "# [`~kept`] as written in code" in text  # fenced code is left as written


def test_answers_on_a_doc_builder_page_quote_no_alert_or_link_markup(tmp_path: Path) -> None:
    bot = documents_assistant_of(tmp_path, {"saving.md": HF_PAGE})
    answer = bot.ask("Is there anything to watch out for when saving an adapter under ZeRO-3?")
    assert "Warning: Saving with DeepSpeed ZeRO-3 needs the weights gathered on one rank first" in answer.text
    assert "[!" not in answer.text and "[~" not in answer.text, answer.text


ATTRIBUTES_PAGE = """# Quickstart

[](){ #quickstart }

## Install { #install .wide }

Install the server with pip. { .annotate }

Read the [upgrade notes](upgrade.md){ .md-button } before a major release.

Print the URL with `kubectl get isvc sklearn -o jsonpath={.status.url}`; the route is {.status.url} in the status.
"""


def test_attribute_lists_are_no_words_of_a_page() -> None:
    """Python-Markdown's attribute lists, which MkDocs sites write after a heading, a paragraph or a link, were
    read as words: a section headed "Install { #install .wide }" and a sentence ending "{ .annotate }"."""
    document = read_markdown(ATTRIBUTES_PAGE)
    text = "\n".join(s.text for s in document.sections)
    assert [s.heading for s in document.sections if s.text.strip()] == ["Install"]
    assert "Install the server with pip." in text and "Read the upgrade notes before a major release." in text
    assert "{ #" not in text and "{ ." not in text and "{ #quickstart }" not in text, text
    assert "jsonpath={.status.url}" in text and "the route is {.status.url} in the status" in text  # no class


MYST_PAGE = """# Serving

(serving-guide)=

## Offline inference

Use {class}`~tern.Engine` for offline batches; see {ref}`the engine arguments <engine-args>` and {doc}`quickstart`.

```{note}
Offline inference loads the model once per process.
```

````{warning}
:class: dropdown
Do not share one `Engine` between processes:

```python
engine = Engine(model="tern-small")
```
````

```{code-block} console
:caption: Start the server
$ tern serve tern-small
```

```{toctree}
:maxdepth: 1
quickstart
```

```{versionadded} 0.4
Prefix caching.
```

:::{tip}
Keep one engine per GPU.
:::

```{python}
print("a fence whose language is written in braces stays code")
```
"""


def test_a_myst_page_reads_as_its_site_shows_it() -> None:
    """MyST, the Markdown Sphinx reads: a callout directive (```{note}) was read as a code block of language
    "{note}", a role ({ref}`text <target>`) and a target line ("(serving-guide)=") as words."""
    cleaned = without_site_markup(MYST_PAGE)
    assert cleaned.count("\n") == MYST_PAGE.count("\n")  # sections still start on the file's lines
    text = "\n".join(s.text for s in read_markdown(MYST_PAGE).sections)
    assert "Use Engine for offline batches; see the engine arguments and quickstart." in text, text
    assert "Note: Offline inference loads the model once per process." in text, text
    assert "Warning: Do not share one Engine between processes:" in text, text
    assert '```python\nengine = Engine(model="tern-small")\n```' in text, text  # a callout's code stays code
    assert "```console\n$ tern serve tern-small\n```" in text, text  # its options go
    assert "New in version 0.4: Prefix caching." in text, text
    assert "Tip: Keep one engine per GPU." in text, text  # a colon fence
    assert 'print("a fence whose language is written in braces stays code")' in text
    assert not [
        m for m in ("{note}", "{ref}", "{class}", ")=", ":caption:", ":class:", "toctree", "maxdepth") if m in text
    ], text


def test_braces_inside_a_code_span_are_no_myst_role() -> None:
    """A REST path's `{appId}` right before a span's closing backtick read as a role over the text up to the next
    span: "`/ws/v1/.../{appId}` or `/ws/v1/...`" lost its " or "."""
    line = "**URL** : `/ws/v1/partition/{partitionName}/application/{appId}` or `/ws/v1/queue/{queueName}/app/{appId}`"
    assert without_site_markup(line) == line


def test_answers_on_a_myst_page_quote_its_callouts_as_text(tmp_path: Path) -> None:
    bot = documents_assistant_of(tmp_path, {"serving.md": MYST_PAGE})
    answer = bot.ask("Can I share one Engine between processes?")
    assert "Warning: Do not share one Engine between processes:" in answer.text, answer.text
    assert "{warning}" not in answer.text and ":class:" not in answer.text, answer.text


MDX_PAGE = """import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
export const meta = { sidebar: 'deploy' };

# Deploying on Gaudi

{/* the image tag is bumped at each release */}
The Gaudi backend runs TGI on Intel Gaudi cards; start it with the `--runtime=habana` flag.

<Tip>

Set `HABANA_VISIBLE_DEVICES=all` to use every card.

</Tip>

```python
import requests  # code keeps its imports
```
"""


def test_an_mdx_page_is_read_as_markdown_without_its_imports(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "gaudi.mdx").write_text(MDX_PAGE, encoding="utf-8")
    bot = Assistant(Settings(home=tmp_path / "home", knowledge=(folder,), model="extractive"), auto_index=False)
    assert bot.index(progress=False).entries >= 1
    text = "\n".join(e.text for e in bot.entries.values())
    assert "import Tabs" not in text and "export const" not in text and "{/*" not in text, text
    assert "import requests" in text  # fenced code is as written
    answer = bot.ask("Which flag starts the Gaudi backend?")
    assert not answer.refused and "--runtime=habana" in answer.text, answer.text
    assert "doc:gaudi.mdx#" in answer.text
