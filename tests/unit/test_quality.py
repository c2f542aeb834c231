"""The page-text verdict: each signal on text built in code, the known false positives, and
the ranking the PDF ladder relies on (better text, higher score)."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import string
import subprocess
import sys
from collections.abc import Container

import pytest

from papersift import pdf_engines, quality
from papersift.lexicon import lexicon
from papersift.quality import PageLayout, TextVerdict, assess_text, detect_language

PT = (
    "A licitação pública é o procedimento administrativo pelo qual a administração seleciona a proposta "
    "mais vantajosa para o contrato de seu interesse. O edital de convocação deverá ser publicado com "
    "antecedência mínima de trinta dias, contendo as condições de participação, os critérios de julgamento "
    "e as exigências de habilitação jurídica, técnica e econômico-financeira dos interessados. Os documentos "
    "apresentados pelas empresas serão analisados pela comissão, que lavrará ata circunstanciada de todos os "
    "atos praticados durante a sessão pública. O valor estimado da contratação é de R$ 147.200,04, conforme "
    "planilha orçamentária anexa, e as despesas correrão por conta da dotação prevista no orçamento vigente."
)
EN = (
    "Earth science is the study of the planet on which we live, including its rocks, oceans, atmosphere and "
    "the living things that depend on them. Geologists examine how mountains are built and worn down, how "
    "earthquakes release energy stored in the crust, and how minerals form over millions of years. "
    "Meteorologists measure the movement of air masses and forecast the weather that affects farming, travel "
    "and public safety. Together these disciplines help us understand natural hazards and manage the "
    "resources on which modern society depends, from groundwater and soil to metals and energy."
)
ES = (
    "La biblioteca municipal ofrece a los vecinos un espacio tranquilo para la lectura y el estudio, además "
    "de talleres gratuitos para niños y adultos durante todo el año. Los usuarios pueden solicitar el préstamo "
    "de libros, revistas y películas presentando su credencial vigente en el mostrador de atención. El horario "
    "de apertura se amplía durante el periodo de exámenes, y el personal está disponible para ayudar en la "
    "búsqueda de información en los catálogos electrónicos y en las bases de datos que la institución mantiene."
)
DE = (
    "Die Mitarbeiterinnen und Mitarbeiter des Unternehmens haben sich in der vergangenen Woche zu einer "
    "Versammlung getroffen, um über die neuen Arbeitszeiten und die Verteilung der Aufgaben zu sprechen. "
    "Dabei wurde beschlossen, dass die Abteilungen künftig enger zusammenarbeiten und ihre Ergebnisse "
    "regelmäßig gemeinsam besprechen. Die Mitarbeiterinnen begrüßten die Entscheidung ausdrücklich."
)
#: languages we ship no dictionary for: few dictionary words, but real text
NO_DICTIONARY = {
    "pl": "Wszystkie dzieci w naszej szkole uczą się języka angielskiego od pierwszej klasy, a starsi uczniowie "
          "mogą wybrać także niemiecki lub hiszpański. Nauczyciele przygotowują lekcje tak, aby każdy mógł "
          "rozwijać swoje zainteresowania i zdobywać nowe umiejętności w przyjaznej atmosferze.",
    "tr": "Belediye meclisi dün akşam toplanarak gelecek yılın bütçesini görüştü ve ilkokulun yenileme "
          "çalışmalarını değerlendirdi. Toplantıya katılan vatandaşlar daha fazla bisiklet yolu ve sokakların "
          "daha iyi aydınlatılmasını talep etti ve belediye başkanı önerileri dikkatle dinledi.",
    "cs": "Všechny děti v naší škole se učí anglický jazyk od první třídy a starší žáci si mohou vybrat také "
          "němčinu nebo španělštinu. Učitelé připravují hodiny tak, aby každý mohl rozvíjet své zájmy a "
          "získávat nové dovednosti v přátelské atmosféře.",
    "fi": "Kaupunginvaltuusto kokoontui eilen illalla käsittelemään ensi vuoden talousarviota ja keskustelemaan "
          "alakoulun peruskorjauksesta. Useat asukkaat vaativat lisää pyöräteitä ja parempaa katuvalaistusta "
          "asuinalueelle, ja valtuutetut lupasivat selvittää asian nopeasti.",
    "hu": "A városi könyvtár csendes helyet kínál a lakóknak olvasásra és tanulásra, valamint ingyenes "
          "foglalkozásokat gyermekeknek és felnőtteknek egész évben. A felhasználók könyveket, folyóiratokat és "
          "filmeket kölcsönözhetnek érvényes olvasójegyük bemutatásával.",
    "ro": "Biblioteca municipală oferă locuitorilor un spațiu liniștit pentru lectură și studiu, precum și "
          "ateliere gratuite pentru copii și adulți pe tot parcursul anului. Utilizatorii pot împrumuta cărți, "
          "reviste și filme prezentând legitimația valabilă la ghișeu.",
    "vi": "Thư viện thành phố cung cấp cho người dân một không gian yên tĩnh để đọc sách và học tập, cùng với "
          "các lớp học miễn phí cho trẻ em và người lớn trong suốt cả năm. Người dùng có thể mượn sách, tạp chí "
          "và phim bằng cách xuất trình thẻ thành viên còn hiệu lực.",
    "cy": "Mae llyfrgell y ddinas yn cynnig lle tawel i drigolion ddarllen ac astudio, yn ogystal â gweithdai "
          "am ddim i blant ac oedolion drwy gydol y flwyddyn. Gall defnyddwyr fenthyg llyfrau, cylchgronau a "
          "ffilmiau drwy ddangos cerdyn aelodaeth dilys.",
    "ca": "La biblioteca municipal ofereix als veïns un espai tranquil per a la lectura i l'estudi, a més de "
          "tallers gratuïts per a infants i adults durant tot l'any. Els usuaris poden demanar en préstec "
          "llibres, revistes i pel·lícules presentant el carnet vigent al taulell d'atenció.",
    "sv": "Kommunfullmäktige sammanträdde i går kväll för att granska nästa års budget och diskutera "
          "renoveringen av grundskolan. Flera invånare tog till orda och krävde fler cykelbanor och bättre "
          "belysning på gatorna i området, och politikerna lovade att återkomma med ett förslag.",
}

_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def substitute(text: str, key: str, extra: dict[str, str] | None = None) -> str:
    """A broken font's text layer: every letter mapped to another, case shape kept."""
    table = dict(zip(_ALPHABET + _ALPHABET.upper(), key + key.upper(), strict=True))
    table.update(extra or {})
    return "".join(table.get(ch, ch) for ch in text)


QWERTY = "qwertyuiopasdfghjklzxcvbnm"
ROT13 = _ALPHABET[13:] + _ALPHABET[:13]


def assert_clean(verdict: TextVerdict) -> None:
    assert not verdict.suspect, verdict
    assert not verdict.corrupt, verdict


# --- clean text --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "language"), [(PT, "pt"), (EN, "en"), (ES, "es"), (DE, "de")])
def test_clean_paragraphs_are_trusted_and_their_language_named(text: str, language: str) -> None:
    verdict = assess_text(text)
    assert_clean(verdict)
    assert verdict.signals == ()
    assert verdict.language == language
    assert verdict.score >= 0.95
    assert verdict.confidence >= 0.9


def test_a_long_page_of_clean_prose_is_trusted() -> None:
    verdict = assess_text("\n".join([PT, EN, ES, DE, PT, ES] * 4))
    assert_clean(verdict)
    assert verdict.score >= 0.95


@pytest.mark.parametrize("language", sorted(NO_DICTIONARY))
def test_languages_without_a_dictionary_are_not_taken_for_a_cipher(language: str) -> None:
    verdict = assess_text(NO_DICTIONARY[language])
    assert_clean(verdict)
    assert {"unlisted_language", "few_dictionary_words"} & set(verdict.signals)
    assert verdict.confidence <= 0.5
    assert verdict.language is None


# --- empty and image-only pages ----------------------------------------------------------

def test_blank_page_is_empty_but_not_suspect() -> None:
    verdict = assess_text("  \n\f ")
    assert verdict.signals == ("empty",)
    assert verdict.score == 0.0
    assert not verdict.suspect


@pytest.mark.parametrize(("text", "layout", "said"), [
    ("", PageLayout(), "No text on the page"),
    ("É", PageLayout(), "Only 1 character of text on the page"),
    ("É 7", PageLayout(), "Only 2 characters of text on the page"),
    ("7", PageLayout(image_count=1, image_area_ratio=0.9), "Only 1 character of text on a page that draws"),
])
def test_the_reason_of_a_near_empty_page_says_how_much_text_there_is(text: str, layout: PageLayout,
                                                                       said: str) -> None:
    verdict = assess_text(text, layout)
    assert "empty" in verdict.signals
    assert verdict.reason.startswith(said)


@pytest.mark.parametrize("layout", [
    PageLayout(image_count=1, image_area_ratio=0.9),
    PageLayout(has_vector_glyphs=True),
])
def test_empty_text_on_a_page_that_draws_needs_ocr(layout: PageLayout) -> None:
    verdict = assess_text("", layout)
    assert verdict.suspect and not verdict.corrupt
    assert set(verdict.signals) == {"empty", "image_only"}
    assert verdict.score == 0.0


def test_a_small_logo_on_a_blank_page_is_not_worth_ocr() -> None:
    verdict = assess_text("", PageLayout(image_count=1, image_area_ratio=0.005))
    assert not verdict.suspect
    assert verdict.signals == ("empty",)


def test_images_of_unknown_area_count_as_drawing() -> None:
    assert assess_text("", PageLayout(image_count=3)).suspect


def test_page_number_on_a_scanned_page_still_needs_ocr() -> None:
    verdict = assess_text("  - 12 -  ", PageLayout(image_count=1, image_area_ratio=0.95))
    assert verdict.suspect
    assert "image_only" in verdict.signals


def test_a_figure_beside_a_full_page_of_text_is_not_a_scan() -> None:
    verdict = assess_text(EN + "\n" + PT, PageLayout(image_count=2, image_area_ratio=0.3))
    assert_clean(verdict)


# --- glyph garbage ----------------------------------------------------------------------

@pytest.mark.parametrize("garbage", [
    " ".join(f"(cid:{n})" for n in range(3, 90)),                      # pdfminer
    " ".join(f"/{n}" for n in range(120, 200)),                          # pypdf codes
    "".join(f"/g{n}" for n in range(10, 80)),                            # glyph names
    "\ufffd" * 60 + " texto",                                            # replacement chars
    "".join(chr(0xE000 + i) for i in range(60)),                         # private use area
    "".join(chr(i) for i in (1, 2, 3, 4, 5, 6, 7, 8, 14, 15, 16) * 6),  # C0 controls
])
def test_unmapped_glyphs_make_the_page_corrupt(garbage: str) -> None:
    verdict = assess_text(garbage)
    assert verdict.corrupt and verdict.suspect
    assert "glyph_garbage" in verdict.signals
    assert verdict.score < 0.3


def test_garbage_mixed_into_prose_makes_it_suspect_with_a_lower_score() -> None:
    words = EN.split()
    damaged = " ".join(w if i % 6 else "(cid:71)(cid:72)" for i, w in enumerate(words))
    verdict = assess_text(damaged)
    assert verdict.suspect
    assert "glyph_garbage" in verdict.signals
    assert verdict.score < assess_text(EN).score - 0.1


def test_unmapped_glyphs_reported_by_the_engine_count_as_garbage() -> None:
    verdict = assess_text(EN[:300], PageLayout(unmapped_glyphs=200))
    assert verdict.corrupt
    assert "glyph_garbage" in verdict.signals


def test_a_few_private_use_bullets_in_word_output_are_fine() -> None:
    bulleted = "\n".join(f"\uf0b7 {sentence.strip()}." for sentence in EN.split(".") if sentence.strip())
    assert_clean(assess_text(bulleted))


def test_fractions_dates_and_urls_are_not_pypdf_codes() -> None:
    text = EN + " See https://example.org/docs/123 and /usr/lib on 12/05/2024; mix 1/2 cup, 3/4 of it, 24/7."
    verdict = assess_text(text)
    assert_clean(verdict)
    assert "glyph_garbage" not in verdict.signals


# --- low letter ratio -------------------------------------------------------------------

def test_codes_landing_on_punctuation_are_suspect() -> None:
    # a shifted encoding maps most glyphs onto punctuation and digits
    shifted = "".join(chr(ord(c) - 64) if "a" <= c <= "z" else c for c in EN[:400])
    verdict = assess_text(shifted)
    assert verdict.suspect
    assert "low_letter_ratio" in verdict.signals


def test_numeric_table_is_trusted_as_mostly_numbers_not_corrupt() -> None:
    rng = random.Random(5)
    rows = ["Revenue Cost Margin Total"] + [
        " ".join(f"{rng.randint(1, 9)},{rng.randint(100, 999)}.{rng.randint(0, 9)}" for _ in range(6))
        + f" {rng.randint(1, 99)}% R$ {rng.randint(10, 999)}.{rng.randint(100, 999)},{rng.randint(10, 99)}"
        for _ in range(40)
    ]
    verdict = assess_text("\n".join(rows))
    assert_clean(verdict)
    assert "mostly_numbers" in verdict.signals
    assert verdict.confidence < 0.7


def test_json_and_source_code_are_not_corrupt() -> None:
    # structured formats run through the same verdict: their symbols are syntax, their words real
    json_text = "\n".join(
        f'{{"id": {i}, "name": "customer {i}", "email": "user{i}@example.com", "active": true, '
        f'"created": "2024-01-{i % 28 + 1:02d}", "tags": ["billing", "priority"], "balance": {i * 13.5}}},'
        for i in range(40))
    code = "\n".join(
        f"def total_{i}(items: list[int]) -> int:\n    return sum(x * {i} for x in items if x > {i}) // (1 + {i})"
        for i in range(30))
    for text in (json_text, code):
        verdict = assess_text(text)
        assert not verdict.corrupt, verdict


def test_spreadsheet_rows_with_dates_and_phone_numbers_are_trusted() -> None:
    rows = "\n".join(
        f"{2024 - i % 3}-{i % 12 + 1:02d}-{i % 28 + 1:02d}\t({i % 90 + 10}) 9{i:03d}-{i * 7 % 10000:04d}\t"
        f"{i * 3 % 24:02d}:{i * 7 % 60:02d}\tRua das Flores {i}\tpago"
        for i in range(60))
    verdict = assess_text(rows)
    assert not verdict.suspect, verdict


@pytest.mark.parametrize("hyphen", ["-", "\x02", "\xad"])
def test_words_hyphenated_across_lines_are_not_split_words(hyphen: str) -> None:
    # narrow justified columns: every line ends mid-word; pdfium marks its own hyphens with U+0002
    words = (PT + " " + PT).split()
    lines = []
    for i in range(0, len(words) - 6, 6):
        last = words[i + 5]
        half = len(last) // 2
        if len(last) >= 6 and last.isalpha():
            lines.append(" ".join(words[i : i + 5]) + f" {last[:half]}{hyphen}\r\n{last[half:]}")
        else:
            lines.append(" ".join(words[i : i + 6]))
    verdict = assess_text("\r\n".join(lines))
    assert_clean(verdict)
    assert verdict.signals == ()


def test_table_of_contents_with_dot_leaders_is_trusted() -> None:
    toc = "\n".join(f"{i}. {title} {'.' * 40} {i * 7}" for i, title in enumerate(
        ["Introduction", "Installation", "Usage", "Calling the package", "Options", "Known bugs and improvements",
         "License", "Font scaling", "Acknowledgements", "References"], start=1))
    assert_clean(assess_text(toc))


# --- cipher -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", [PT, EN, ES, DE], ids=["pt", "en", "es", "de"])
@pytest.mark.parametrize("key", [QWERTY, ROT13], ids=["qwerty", "rot13"])
def test_word_shaped_substitution_cipher_is_corrupt(text: str, key: str) -> None:
    verdict = assess_text(substitute(text, key))
    assert verdict.corrupt and verdict.suspect
    assert "cipher" in verdict.signals
    assert verdict.score < 0.4
    assert verdict.language is None


def test_almost_every_random_substitution_is_caught() -> None:
    # letter-pair statistics tell ciphers from languages we have no dictionary for; a few
    # random keys happen to look like a real language, the rest must all be caught
    rng = random.Random(20240611)
    caught = total = 0
    for _ in range(30):
        key = "".join(rng.sample(_ALPHABET, len(_ALPHABET)))
        for text in (PT, EN, ES):
            verdict = assess_text(substitute(text, key))
            total += 1
            caught += verdict.corrupt and "cipher" in verdict.signals
            assert verdict.score < 0.9  # even a missed cipher never scores like real text
    assert caught / total >= 0.95


def test_broken_brazilian_font_licitacao_style_is_corrupt() -> None:
    # the real-world shape: the heading font maps Ç -> g, Ã -> A ("LICITAgAO"), the body font
    # scrambles lower case and maps 1 -> í ("couvocnrónto", "R$ í47.200,04")
    heading = "EDITAL DE LICITAÇÃO Nº 12/2024 - CONTRATAÇÃO DE SERVIÇOS".translate(str.maketrans("ÇÃ", "gA"))
    body = substitute(PT, QWERTY).replace("1", "í")
    broken = heading + "\n" + body
    assert "LICITAgAO" in broken and "í47.200,04" in broken  # the fixture has the real shape
    verdict = assess_text(broken)
    assert verdict.corrupt
    assert "cipher" in verdict.signals


def test_case_scrambled_text_is_suspect() -> None:
    # pypdf on issue10640-like Type1 fonts: 'IntROdUCtIOn', 'InStALLAtIOn'
    scrambled = "".join(ch.upper() if ch in "orsuce" and i % 3 else ch for i, ch in enumerate(EN))
    verdict = assess_text(scrambled)
    assert verdict.suspect
    assert "cipher" in verdict.signals
    assert verdict.score < assess_text(EN).score


def test_cipher_in_one_part_of_a_long_page_is_caught() -> None:
    page = "\n".join([EN, DE, PT, substitute(ES + " " + EN, QWERTY), EN, PT])
    verdict = assess_text(page)
    assert verdict.suspect
    assert "cipher" in verdict.signals


# --- known false positives of the cipher rule ---------------------------------------------

def test_camelcase_alloy_codes_are_not_a_cipher() -> None:
    text = (
        "Filler metals ENiCrFe-3 and ERNiCrMo-3 are used for dissimilar welds; ENiCrMo-4 suits severe "
        "corrosion while ERNiCr-3 covers general work. The NiCr and NiCrFe families tolerate dilution, and "
        "ENiCu-7 joins copper alloys. Preheat is rarely needed for ERNiCrMo-10 or ENiCrFe-7 deposits. "
    ) * 3
    verdict = assess_text(text)
    assert_clean(verdict)
    assert "cipher" not in verdict.signals


def test_brand_names_are_not_a_cipher() -> None:
    text = (
        "The team used an iPhone and a MacBook to prepare the PowerPoint deck, posted the video on YouTube and "
        "shared the JavaScript code on GitHub. Lunch came from McDonald's, the report went to LinkedIn and the "
        "spare parts were bought on eBay. Later they moved the files to OneDrive and DropBox and opened a "
        "ticket in ServiceNow about the WordPress plugin and the PayPal checkout."
    )
    verdict = assess_text(text)
    assert_clean(verdict)
    assert "cipher" not in verdict.signals


def test_repeated_unknown_tokens_are_vocabulary_not_a_cipher() -> None:
    text = " ".join(f"{sentence}. The XyloTrak unit reports to QwzPlex." for sentence in EN.split(". ")[:5])
    verdict = assess_text(text)
    assert_clean(verdict)


def test_reference_list_of_names_is_not_a_cipher() -> None:
    text = (
        "Karpukhin, V., Oguz, B., Min, S., Lewis, P., Wu, L., Edunov, S., Chen, D., Yih, W. Dense passage "
        "retrieval for open-domain question answering. Kwiatkowski, T., Palomaki, J., Redfield, O., Collins, M., "
        "Parikh, A., Alberti, C., Epstein, D., Polosukhin, I., Devlin, J., Lee, K. Natural questions: a benchmark. "
        "Zhang, Y., Sun, S., Galley, M., Chen, Y., Brockett, C., Gao, X., Gao, J., Liu, J., Dolan, B. Dialogpt."
    )
    assert_clean(assess_text(text))


@pytest.mark.parametrize(("text", "language"), [
    ("東京都は日本の首都であり、多くの人々が働いています。電車はとても便利で、時間通りに運行されます。" * 3, "ja"),
    ("北京是中华人民共和国的首都，也是全国的政治和文化中心。每年都有很多游客来这里参观名胜古迹。" * 3, "zh"),
    ("서울은 대한민국의 수도이며 많은 사람들이 살고 있습니다. 지하철은 매우 편리하고 깨끗합니다." * 3, "ko"),
    ("القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها، ويعيش فيها ملايين الناس ويعملون في مختلف المجالات." * 3,
     "ar"),
    ("Москва является столицей России и крупнейшим городом страны, здесь живут и работают миллионы людей." * 3,
     "ru"),
])
def test_non_latin_scripts_are_not_judged_by_latin_dictionaries(text: str, language: str) -> None:
    verdict = assess_text(text)
    assert_clean(verdict)
    assert verdict.language == language
    assert verdict.score >= 0.95


AR = (
    "وعليه، فإن الحكومة المصرية تضع نصب عينيها خلال المرحلة المقبلة تكليف السيد رئيس الجمهورية لها بالعمل على "
    "تحقيق عدد من الأهداف على رأسها وضع بناء الإنسان المصري على رأس قائمة الأولويات، خاصة في مجالات التعليم "
    "والصحة والثقافة. تنص المادة الأولى من هذا القانون على أن تلتزم الدولة بحماية حقوق المواطنين وضمان حرية "
    "الرأي والتعبير، كما تلتزم الجهات المختصة بتنفيذ الأحكام القضائية الصادرة في المواعيد المحددة."
)


def test_sound_arabic_prose_is_trusted() -> None:
    verdict = assess_text(AR)
    assert_clean(verdict)
    assert verdict.language == "ar"
    assert verdict.signals == ()


def test_arabic_font_mapping_letters_to_other_arabic_letters_is_a_cipher() -> None:
    # a wrong ToUnicode map: real Arabic letters, the wrong ones (ل->ا, ه->ا, ع->ي, ق->ف as in the corpus file)
    broken = AR.translate(str.maketrans("لهعق", "اايف"))
    verdict = assess_text(broken)
    assert verdict.suspect
    assert "cipher" in verdict.signals
    assert verdict.language == "ar"
    assert verdict.score < assess_text(AR).score


def test_decoded_glyph_codes_jumping_between_scripts_are_corrupt() -> None:
    # pypdf on a CID font without ToUnicode (pm__kampo.pdf): one glyph per line, each from another
    # script: Telugu, Kannada, Bengali, Gurmukhi, Armenian, Greek, Cyrillic, Sinhala, Tamil, Arabic...
    glyphs = ["క", "ಕ", "ক", "ਕ", "Ր", "ͷ", "Ұ", "ද", "த", "ع", "Λ", "ủ", "ઝ", "ཀ", "ა", "߲", "ࡾ", "౮", "Ή", "Ố"]
    text = "\n".join(random.Random(3).choice(glyphs) for _ in range(300))
    verdict = assess_text(text)
    assert verdict.corrupt
    assert "script_mix" in verdict.signals


def test_korean_with_hanja_is_korean() -> None:
    text = ("大韓民國 憲法 第1條 대한민국은 민주공화국이다. "
            "大韓民國의 主權은 국민에게 있고, 모든 권력은 국민으로부터 나온다. ") * 4
    verdict = assess_text(text)
    assert_clean(verdict)
    assert verdict.language == "ko"


def test_the_national_sets_hold_common_han_and_not_what_wrong_cmaps_land_on() -> None:
    common, rare = quality.national_charsets()
    assert {"黎", "荣", "髙", "﨑", "ア", "ｱ", "한", "ㄱ"} <= common  # GB2312, cp932, JIS X 0201, KS X 1001
    assert "哾" in rare and "哾" not in common  # only JIS X 0212
    assert "㦓" not in common | rare  # CJK Extension A, in none of them
    assert "킜" not in common  # a Hangul syllable outside KS X 1001's 2,350
    assert quality.national_charsets() is quality.national_charsets()  # decoded once


@pytest.mark.parametrize(("codec", "leads", "trails", "prefix"), [
    ("big5", bytes(range(0x81, 0xFF)), bytes([*range(0x40, 0x7F), *range(0xA1, 0xFF)]), b""),  # ASCII trails
    ("cp932", bytes([*range(0x81, 0xA0), *range(0xE0, 0xF0)]), bytes([*range(0x40, 0x7F), *range(0x80, 0xFD)]), b""),
    ("euc_jp", bytes(range(0xA1, 0xFF)), bytes(range(0xA1, 0xFF)), b"\x8f"),  # JIS X 0212's three bytes
])
def test_one_decode_of_every_code_finds_what_a_decode_per_code_finds(codec: str, leads: bytes, trails: bytes,
                                                                     prefix: bytes) -> None:
    expected = set()
    for lead in leads:
        for trail in trails:
            try:
                decoded = (prefix + bytes((lead, trail))).decode(codec)
            except UnicodeDecodeError:
                continue
            if len(decoded) == 1:
                expected.add(decoded)
    assert quality._decoded(codec, leads, trails, prefix) == expected


@pytest.mark.parametrize("text", [
    # pdfium on a Type0 font whose ToUnicode maps to wrong code points: rare Extension A Han
    "4. 6 䋴䋮䋶糫 Ǎ蒭鍍伴俘緌鍍伴俘u勢渡袱糫",
    # pdfium on a Cyrillic title block whose ToUnicode it misreads: Hangul syllables, none in KS X 1001
    "킜킰톁톁킰 킜킰톁톈톂킰킱\n킘킷킼. 킛킸톁톂 № 킴킾킺톃킼. 킟킾킴킿. 킔킰톂킰",
    "哾㦓 哾㦓 哾㦓",
])
def test_han_and_hangul_outside_every_national_set_make_a_page_suspect(text: str) -> None:
    verdict = assess_text(text)
    assert verdict.suspect
    assert "implausible_script" in verdict.signals
    assert "none of GB2312, Big5, JIS X 0208 and KS X 1001" in verdict.reason


def test_the_more_plausible_reading_of_a_cjk_page_scores_higher() -> None:
    wrong, right = assess_text("哾㦓 哾㦓 哾㦓 黎荣"), assess_text("黎荣 黎荣 黎荣 黎荣")
    assert_clean(right)
    assert wrong.score < right.score


def test_one_rare_character_on_a_page_of_common_han_stays_clean_but_ranks_below_none() -> None:
    page = "北京是中华人民共和国的首都，也是全国的政治和文化中心。" * 4
    with_rare = assess_text(page + "㦓")
    assert_clean(with_rare)
    assert with_rare.score < assess_text(page + "黎").score


def test_characters_only_in_jis_x_0212_weigh_less_than_those_in_no_set() -> None:
    # one Extension A character and one JIS X 0212 one among 15 common Han: 1.5 of 17 weighted
    common_text = "北京是中华人民共和国的首都也是全国"
    assert "implausible_script" not in assess_text(common_text + "哾").signals  # 1 only: no signal
    mixed = assess_text(common_text[:15] + "㦓哾")
    extension_only = assess_text(common_text[:15] + "㦓㦓")
    assert mixed.score > extension_only.score


def test_a_line_of_cjk_garbage_on_a_latin_page_is_suspect() -> None:
    # pdfium on a SourceHanSans font whose ToUnicode has a UTF-8 codespace: the Latin line is right
    line = "abc defghijklmno pqrstuvw xyz0123456789 Ꞁ肁궎肁ꢏ肁궆"
    verdict = assess_text(f"{line}\n{line}")
    assert verdict.suspect
    assert "implausible_script" in verdict.signals


def test_a_chinese_name_in_english_prose_is_no_wrong_cmap() -> None:
    assert_clean(assess_text(EN + " The survey was led by 黎荣 and 陳大文 of 國立臺灣大學."))


def test_winansi_symbols_in_a_japanese_page_are_glyph_codes() -> None:
    # pdfium on pm__kampo.pdf: a CID font without ToUnicode decodes digits to ™ — › œ Ÿ ˜
    verdict = assess_text("平成 ™— › ™œ 日 金曜日 第 官報 ›Ÿ˜ ›\n" * 3)
    assert verdict.suspect
    assert "glyph_garbage" in verdict.signals


def test_trademarks_and_czech_letters_in_latin_text_are_not_mojibake() -> None:
    text = EN + " PowerPoint™ and Word™ are trademarks. Dvořák, Škoda, œuvre, cœur — “quoted” … • item."
    assert_clean(assess_text(text))


def test_english_terms_in_a_japanese_page_are_fine() -> None:
    text = "このPDFファイルはPythonとReportLabで作成されました。" * 10
    verdict = assess_text(text)
    assert_clean(verdict)
    assert verdict.language == "ja"


@pytest.mark.parametrize("text", ["Page 3", "Hello World", "Figura 2 — Mapa", "ENiCrFe-3", "Total: 1.485,10"])
def test_very_short_pages_are_trusted_with_low_confidence(text: str) -> None:
    verdict = assess_text(text)
    assert_clean(verdict)
    assert verdict.confidence < 0.8


# --- spacing damage ---------------------------------------------------------------------

def test_words_run_together_are_spacing_damage_trusted_with_lower_confidence() -> None:
    glued = "\n".join(sentence.replace(" ", "") + "." for sentence in EN.split(". "))
    assert "WhatisEarthScience" not in glued  # sanity: built from EN, not the literal example
    verdict = assess_text("WhatisEarthScience?\n" + glued)
    assert not verdict.suspect and not verdict.corrupt  # the words are right: OCR would not do better
    assert "spacing_damage" in verdict.signals
    assert verdict.confidence < assess_text(EN).confidence
    assert verdict.score < assess_text(EN).score


def test_words_split_by_stray_spaces_are_spacing_damage() -> None:
    def split_long(word: str) -> str:
        return word[: len(word) // 2] + " " + word[len(word) // 2 :] if len(word) >= 8 else word

    broken = "Mit arbei terinnen " + " ".join(split_long(w) for w in (DE + " " + DE).split())
    verdict = assess_text(broken)
    assert not verdict.suspect and not verdict.corrupt
    assert "spacing_damage" in verdict.signals
    assert verdict.score < assess_text(DE).score


# --- the ladder's ranking ----------------------------------------------------------------

def test_score_ranks_engines_on_the_same_page() -> None:
    clean = assess_text(PT).score
    glued = assess_text(PT.replace(" ", "")).score
    cipher = assess_text(substitute(PT, QWERTY)).score
    garbage = assess_text(" ".join(f"(cid:{ord(c)})" for c in PT[:300])).score
    assert clean > glued > cipher > garbage


def test_verdict_is_the_same_in_every_process() -> None:
    """Lambdas judge the pages of one document in different processes, and the ladder compares
    their scores: nothing may depend on set or dict order, which varies with the hash seed."""
    pages = [substitute(PT, ROT13) + "\n" + EN, PT.replace(" ", ""), substitute(EN, QWERTY), DE, AR,
             "Mit arbei terinnen " + DE]
    script = ("import json, sys\nfrom papersift.quality import assess_text\n"
              "print(json.dumps([repr(assess_text(t)) for t in json.load(sys.stdin)]))")
    answers = set()
    for seed in ("1", "2", "3"):
        done = subprocess.run([sys.executable, "-c", script], input=json.dumps(pages), capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        answers.add(done.stdout)
    assert len(answers) == 1
    assert json.loads(answers.pop()) == [repr(assess_text(t)) for t in pages]


def test_reason_is_one_readable_sentence() -> None:
    verdict = assess_text(substitute(EN, QWERTY))
    assert verdict.reason[0].isupper() and verdict.reason.endswith(".")
    assert "dictionary" in verdict.reason


# --- language and cost -------------------------------------------------------------------

@pytest.mark.parametrize(("text", "language"), [
    (PT, "pt"), (EN, "en"), (ES, "es"), (DE, "de"), ("Москва — столица России. " * 5, "ru"), ("", None),
])
def test_detect_language(text: str, language: str | None) -> None:
    assert detect_language(text) == language


class _CountingWords:
    """The word trie, counting the lookups made in it."""

    def __init__(self, words: Container[str]) -> None:
        self.words, self.lookups = words, 0

    def __contains__(self, word: object) -> bool:
        self.lookups += 1
        return word in self.words


def test_dictionary_work_is_bounded_on_huge_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 300 kB page costs the same dictionary lookups as a 10 kB one: only a bounded sample of
    its words is looked up (the rest of the verdict is a few linear regex passes)."""
    real = lexicon()
    counting = _CountingWords(real.words)
    monkeypatch.setattr(quality, "lexicon", lambda: dataclasses.replace(real, words=counting))
    lookups = []
    for copies in (4, 150):  # ~10 kB and ~300 kB
        counting.lookups = 0
        assert_clean(assess_text("\n".join([PT, EN, ES, DE] * copies)))
        lookups.append(counting.lookups)
    assert 0 < lookups[1] <= 2 * quality.THRESHOLDS.sample_words
    assert lookups[1] <= lookups[0] * 1.2


def test_arbitrary_text_never_breaks_the_verdict() -> None:
    # every page of every engine goes through here: odd mixtures must give a verdict, not an error
    rng = random.Random(11)
    pools = ["abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ  \n", "0123456789.,/-()% ", "ãçéíóúÃÇÉ ",
             "東京日本語かなカナ한국어 ", "العربية ", "русский ", "\ufffd\ue000\x01\x85 ", "(cid:12)/g12/143 ",
             "ΑΒΓαβγ "]
    for _ in range(150):
        pool = "".join(rng.sample(pools, rng.randint(1, 4)))
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 2500)))
        layout = PageLayout(image_count=rng.randint(0, 2), image_area_ratio=rng.random(),
                            has_vector_glyphs=rng.random() < 0.2, unmapped_glyphs=rng.randint(0, 5))
        verdict = assess_text(text, layout)
        assert 0.0 <= verdict.score <= 1.0
        assert 0.0 < verdict.confidence <= 1.0
        assert verdict.suspect or not verdict.corrupt
        assert verdict.reason


# --- the fast paths say what their rules say -------------------------------------------------

def _strings(alphabet: str, count: int = 300) -> list[str]:
    rng = random.Random(29)
    return [*alphabet, *("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(count))]


ASCII = "".join(map(chr, range(128)))
LATIN_1 = "".join(map(chr, range(256))) + "ĀŒœ東"


def test_ascii_byte_tables_agree_with_the_regexes_they_stand_for() -> None:
    for text in _strings(ASCII):
        assert quality._may_have_bad_chars(text) == bool(quality._BAD_CHAR.search(text)), text
        assert quality.nonspace_count(text) == sum(map(len, text.split())), text
        runs, letters, script, beyond_latin = quality._letter_runs(text, quality.nonspace_count(text))
        regex_runs = quality._LATIN_LETTER_RUN.findall(text)
        assert (runs, letters, script, beyond_latin) == (
            quality._sample(regex_runs), sum(map(len, regex_runs)), "latin", False), text
        assert pdf_engines._has_control(text) == bool(pdf_engines._CONTROL.search(text)), text
        assert pdf_engines.strip_controls(text) == pdf_engines._CONTROL.sub("", text), text
        encoded = text.encode("ascii")
        digits = len(encoded) - len(encoded.translate(None, quality._ASCII_DIGITS))
        assert digits == len(quality._DIGIT.findall(text)), text


def test_the_rules_take_their_numbers_from_the_thresholds() -> None:
    """Every number a rule turns on is a field of Thresholds: the rules (and the verdict's
    assembly) hold no numeric literal but 0, 1 and the exponent of a squared penalty."""
    import ast
    import inspect
    import textwrap

    rules = [f for name, f in vars(quality).items() if inspect.isfunction(f) and (
        name.startswith("_judge_") or name in ("assess_text", "_empty_verdict", "_dictionary_score"))]
    assert len(rules) >= 11
    for rule in [*rules, quality._Evidence.verdict]:
        tree = ast.parse(textwrap.dedent(inspect.getsource(rule)))
        exponents = {id(n.right) for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)}
        rounding = {id(n.args[1]) for n in ast.walk(tree)
                    if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "round" and len(n.args) == 2}
        literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                    and type(n.value) in (int, float) and n.value not in (0, 1)
                    and id(n) not in exponents | rounding]
        assert literals == [], f"{rule.__qualname__} has inline numbers {literals}: make them Thresholds fields"


def test_the_case_flip_byte_table_agrees_with_the_flip_regex() -> None:
    for text in _strings(LATIN_1 + string.ascii_letters * 3):
        assert quality._may_flip(text) == bool(quality._FLIP.search(text)), text


# --- math and symbols ---------------------------------------------------------------------

def _with_formulas(symbols: str) -> str:
    """EN with a formula after every sentence, its operators in the private-use area, as math
    fonts without a Unicode map for them come out of pdfium."""
    sentences = [s.strip() for s in EN.split(".") if s.strip()]
    return "\n".join(f"{s}, where x{symbols} y{i} {symbols} 2." for i, s in enumerate(sentences * 2))


def test_private_use_math_symbols_among_sound_words_stay_trusted_with_their_own_signal() -> None:
    verdict = assess_text(_with_formulas("\ue000\ue001\ue002\ue003"))
    assert not verdict.suspect, verdict
    assert "math_symbols" in verdict.signals and "glyph_garbage" not in verdict.signals
    assert verdict.confidence < assess_text(EN).confidence


def test_private_use_glyphs_instead_of_words_are_still_garbage() -> None:
    damaged = "".join(chr(0xE000 + ord(c) % 64) if c.isalpha() and i % 3 == 0 else c for i, c in enumerate(EN))
    verdict = assess_text(damaged)
    assert verdict.suspect and "glyph_garbage" in verdict.signals


def test_tokens_of_glyph_codes_are_told_from_figures_and_prose() -> None:
    from papersift.quality import glyph_code_tokens

    assert glyph_code_tokens('Call the office by "7+%- or !"# then %3*(') == ['"7+%-', '!"#', '%3*(']
    figures = "It grew 12.5% in 2021-2026 (3), to $70,000. Why? Yes! See p. 4: A+ grade, 15%)."
    assert glyph_code_tokens(figures) == []
    assert glyph_code_tokens("rule ::= term --> next") == ["::=", "-->"], "code asks the fonts too"
