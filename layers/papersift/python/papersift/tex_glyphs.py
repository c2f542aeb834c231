"""What the glyphs of TeX's math fonts are in Unicode, by their glyph names and by their codes.

TeX's math fonts (cmex, cmsy, cmmi, the AMS msam and msbm, and their Latin Modern, tx and px
cousins) reach a PDF with no ToUnicode map and with glyph names the Adobe Glyph List does not know
(``/parenleftbigg``, ``/summationdisplay``, ``/epsilon1``). pdfium then writes such a glyph's code as
it is: a big parenthesis becomes U+0012, which reads like a broken text layer. A code's meaning
comes first from the font's own glyph name (its /Differences), then from its family's encoding,
by code (OMX for cmex, OMS for cmsy, OML for cmmi; the order of msam's and msbm's glyphs).

Only what the text layer needs: the names (of every code of OMX, OMS and OML), and by code the
codes pdfium writes as control characters (0x00-0x1F, 0x7F). A glyph that is no character of its
own (a piece of a radical, a brace tip, an accent drawn over a formula) maps to "": it is dropped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

# code, glyph name ("-": the fonts' names are not known here), the character ("" drops the glyph)
_OMX = """
00 parenleftbig ( 01 parenrightbig ) 02 bracketleftbig [ 03 bracketrightbig ] 04 floorleftbig ⌊
05 floorrightbig ⌋ 06 ceilingleftbig ⌈ 07 ceilingrightbig ⌉ 08 braceleftbig { 09 bracerightbig }
0A angbracketleftbig ⟨ 0B angbracketrightbig ⟩ 0C vextendsingle | 0D vextenddouble ‖ 0E slashbig /
0F backslashbig \\ 10 parenleftBig ( 11 parenrightBig ) 12 parenleftbigg ( 13 parenrightbigg )
14 bracketleftbigg [ 15 bracketrightbigg ] 16 floorleftbigg ⌊ 17 floorrightbigg ⌋ 18 ceilingleftbigg ⌈
19 ceilingrightbigg ⌉ 1A braceleftbigg { 1B bracerightbigg } 1C angbracketleftbigg ⟨
1D angbracketrightbigg ⟩ 1E slashbigg / 1F backslashbigg \\ 20 parenleftBigg ( 21 parenrightBigg )
22 bracketleftBigg [ 23 bracketrightBigg ] 24 floorleftBigg ⌊ 25 floorrightBigg ⌋ 26 ceilingleftBigg ⌈
27 ceilingrightBigg ⌉ 28 braceleftBigg { 29 bracerightBigg } 2A angbracketleftBigg ⟨
2B angbracketrightBigg ⟩ 2C slashBigg / 2D backslashBigg \\ 2E slashBig / 2F backslashBig \\
30 parenlefttp ⎛ 31 parenrighttp ⎞ 32 bracketlefttp ⎡ 33 bracketrighttp ⎤ 34 bracketleftbt ⎣
35 bracketrightbt ⎦ 36 bracketleftex ⎢ 37 bracketrightex ⎥ 38 bracelefttp ⎧ 39 bracerighttp ⎫
3A braceleftbt ⎩ 3B bracerightbt ⎭ 3C braceleftmid ⎨ 3D bracerightmid ⎬ 3E braceex ⎪ 3F arrowvertex ⏐
40 parenleftbt ⎝ 41 parenrightbt ⎠ 42 parenleftex ⎜ 43 parenrightex ⎟ 44 angbracketleftBig ⟨
45 angbracketrightBig ⟩ 46 unionsqtext ⨆ 47 unionsqdisplay ⨆ 48 contintegraltext ∮
49 contintegraldisplay ∮ 4A circledottext ⨀ 4B circledotdisplay ⨀ 4C circleplustext ⨁
4D circleplusdisplay ⨁ 4E circlemultiplytext ⨂ 4F circlemultiplydisplay ⨂ 50 summationtext ∑
51 producttext ∏ 52 integraltext ∫ 53 uniontext ⋃ 54 intersectiontext ⋂ 55 unionmultitext ⨄
56 logicalandtext ⋀ 57 logicalortext ⋁ 58 summationdisplay ∑ 59 productdisplay ∏ 5A integraldisplay ∫
5B uniondisplay ⋃ 5C intersectiondisplay ⋂ 5D unionmultidisplay ⨄ 5E logicalanddisplay ⋀
5F logicalordisplay ⋁ 60 coproducttext ∐ 61 coproductdisplay ∐ 62 hatwide ˆ 63 hatwider ˆ
64 hatwidest ˆ 65 tildewide ˜ 66 tildewider ˜ 67 tildewidest ˜ 68 bracketleftBig [ 69 bracketrightBig ]
6A floorleftBig ⌊ 6B floorrightBig ⌋ 6C ceilingleftBig ⌈ 6D ceilingrightBig ⌉ 6E braceleftBig {
6F bracerightBig } 70 radicalbig √ 71 radicalBig √ 72 radicalbigg √ 73 radicalBigg √ 74 radicalbt √
75 radicalvertex "" 76 radicaltp "" 77 arrowvertexdbl ‖ 78 arrowtp ↑ 79 arrowbt ↓
7A bracehtipdownleft "" 7B bracehtipdownright "" 7C bracehtipupleft "" 7D bracehtipupright ""
7E arrowdbltp ⇑ 7F arrowdblbt ⇓
"""
_OMS = """
00 minus − 01 periodcentered ⋅ 02 multiply × 03 asteriskmath ∗ 04 divide ÷ 05 diamondmath ⋄
06 plusminus ± 07 minusplus ∓ 08 circleplus ⊕ 09 circleminus ⊖ 0A circlemultiply ⊗ 0B circledivide ⊘
0C circledot ⊙ 0D circlecopyrt ◯ 0E openbullet ∘ 0F bullet ∙ 10 equivasymptotic ≍ 11 equivalence ≡
12 reflexsubset ⊆ 13 reflexsuperset ⊇ 14 lessequal ≤ 15 greaterequal ≥ 16 precedesequal ⪯
17 followsequal ⪰ 18 similar ∼ 19 approxequal ≈ 1A propersubset ⊂ 1B propersuperset ⊃ 1C lessmuch ≪
1D greatermuch ≫ 1E precedes ≺ 1F follows ≻ 20 arrowleft ← 21 arrowright → 22 arrowup ↑ 23 arrowdown ↓
24 arrowboth ↔ 25 arrownortheast ↗ 26 arrowsoutheast ↘ 27 similarequal ≃ 28 arrowdblleft ⇐
29 arrowdblright ⇒ 2A arrowdblup ⇑ 2B arrowdbldown ⇓ 2C arrowdblboth ⇔ 2D arrownorthwest ↖
2E arrowsouthwest ↙ 2F proportional ∝ 30 prime ′ 31 infinity ∞ 32 element ∈ 33 owner ∋ 34 triangle △
35 triangleinv ▽ 36 negationslash "" 37 mapsto ↦ 38 universal ∀ 39 existential ∃ 3A logicalnot ¬
3B emptyset ∅ 3C Rfractur ℜ 3D Ifractur ℑ 3E latticetop ⊤ 3F perpendicular ⊥ 40 aleph ℵ 5B union ∪
5C intersection ∩ 5D unionmulti ⊎ 5E logicaland ∧ 5F logicalor ∨ 60 turnstileleft ⊢ 61 turnstileright ⊣
62 floorleft ⌊ 63 floorright ⌋ 64 ceilingleft ⌈ 65 ceilingright ⌉ 66 braceleft { 67 braceright }
68 angbracketleft ⟨ 69 angbracketright ⟩ 6A bar | 6B bardbl ‖ 6C arrowbothv ↕ 6D arrowdblbothv ⇕
6E backslash \\ 6F wreathproduct ≀ 70 radical √ 71 coproduct ⨿ 72 nabla ∇ 73 integral ∫ 74 unionsq ⊔
75 intersectionsq ⊓ 76 subsetsqequal ⊑ 77 supersetsqequal ⊒ 78 section § 79 dagger † 7A daggerdbl ‡
7B paragraph ¶ 7C club ♣ 7D diamond ♢ 7E heart ♡ 7F spade ♠
"""
_OML = """
00 Gamma Γ 01 Delta Δ 02 Theta Θ 03 Lambda Λ 04 Xi Ξ 05 Pi Π 06 Sigma Σ 07 Upsilon Υ 08 Phi Φ 09 Psi Ψ
0A Omega Ω 0B alpha α 0C beta β 0D gamma γ 0E delta δ 0F epsilon1 ϵ 10 zeta ζ 11 eta η 12 theta θ
13 iota ι 14 kappa κ 15 lambda λ 16 mu μ 17 nu ν 18 xi ξ 19 pi π 1A rho ρ 1B sigma σ 1C tau τ
1D upsilon υ 1E phi ϕ 1F chi χ 20 psi ψ 21 omega ω 22 epsilon ε 23 theta1 ϑ 24 pi1 ϖ 25 rho1 ϱ
26 sigma1 ς 27 phi1 φ 28 harpoonleftup ↼ 29 harpoonleftdown ↽ 2A harpoonrightup ⇀ 2B harpoonrightdown ⇁
2C hookleft "" 2D hookright "" 2E triangleright ▹ 2F triangleleft ◃ 3F star ⋆ 40 partialdiff ∂
5B flat ♭ 5C natural ♮ 5D sharp ♯ 5E slurbelow ⌣ 5F slurabove ⌢ 60 lscript ℓ 7B dotlessi ı 7C dotlessj ȷ
7D weierstrass ℘ 7E vector "" 7F tie ""
"""
_MSAM = """
00 - ⊡ 01 - ⊞ 02 - ⊠ 03 - □ 04 - ■ 05 - ▪ 06 - ◊ 07 - ◆ 08 - ↻ 09 - ↺ 0A - ⇌ 0B - ⇋ 0C - ⊟ 0D - ⊩
0E - ⊪ 0F - ⊨ 10 - ↠ 11 - ↞ 12 - ⇇ 13 - ⇉ 14 - ⇈ 15 - ⇊ 16 - ↾ 17 - ⇂ 18 - ↿ 19 - ⇃ 1A - ↣ 1B - ↢
1C - ⇆ 1D - ⇄ 1E - ↰ 1F - ↱
"""
_MSBM = """
00 - ≨ 01 - ≩ 02 - ≰ 03 - ≱ 04 - ≮ 05 - ≯ 06 - ⊀ 07 - ⊁ 08 - ≨ 09 - ≩ 0A - ≰ 0B - ≱ 0C - ⪇ 0D - ⪈
0E - ⋠ 0F - ⋡ 10 - ⋨ 11 - ⋩ 12 - ⋦ 13 - ⋧ 14 - ≰ 15 - ≱ 16 - ⪵ 17 - ⪶ 18 - ⪹ 19 - ⪺ 1A - ⪉ 1B - ⪊
1C - ≁ 1D - ≇ 1E - ╱ 1F - ╲
"""

#: the encoding a math font family's codes follow, by its base font name (subset tag stripped):
#: Latin Modern, txfonts, pxfonts and newtx keep Computer Modern's encodings
_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:cmex|lmex|lmmathextension|n?(?:tx|px)ex)", re.IGNORECASE), _OMX),
    (re.compile(r"^(?:cmb?sy|lmsy|lmmathsymbols|n?(?:tx|px)sy)", re.IGNORECASE), _OMS),
    (re.compile(r"^(?:cmmib?|lmmi|lmmathitalic|n?(?:tx|px)mi)", re.IGNORECASE), _OML),
    (re.compile(r"^msam", re.IGNORECASE), _MSAM),
    (re.compile(r"^msbm", re.IGNORECASE), _MSBM),
)
_ENTRY = re.compile(r'([0-9A-F]{2}) (\S+) ("?)(\S*?)\3(?=\s)')


@functools.cache
def _parsed(table: str) -> tuple[dict[int, str], dict[str, str]]:
    """(code -> character, glyph name -> character) of one table."""
    by_code: dict[int, str] = {}
    by_name: dict[str, str] = {}
    for code, name, _, char in _ENTRY.findall(table + "\n"):
        by_code[int(code, 16)] = char
        if name != "-":
            by_name[name] = char
    return by_code, by_name


@functools.cache
def _names() -> dict[str, str]:
    names: dict[str, str] = {}
    for table in (_OMX, _OMS, _OML):
        names.update(_parsed(table)[1])
    return names


def encoding_of(base_font: str) -> Mapping[int, str] | None:
    """Code -> character of the encoding a math font family follows (base font name without its
    subset tag), or None for a family whose codes are not tabled here (Euler, rsfs, stmaryrd, wasy)."""
    for pattern, table in _FAMILIES:
        if pattern.match(base_font):
            return _parsed(table)[0]
    return None


def character_of(glyph_name: str) -> str | None:
    """The character a glyph name stands for: TeX's math glyph names first, then the Adobe Glyph
    List (``uniXXXX`` included); "" for a glyph that is no character of its own; None when the name
    says nothing (``/a18``, ``/g7``)."""
    found = _names().get(glyph_name)
    if found is not None:
        return found
    from pdfminer.glyphlist import glyphname2unicode

    if glyph_name in glyphname2unicode:
        return glyphname2unicode[glyph_name]
    if re.fullmatch(r"uni[0-9A-F]{4}", glyph_name):
        return chr(int(glyph_name[3:], 16))
    return None


def math_glyph(base_font: str, code: int, glyph_name: str | None) -> str:
    """What a raw code of a math font draws: by its glyph name (the font's /Differences), else by
    its family's encoding, else "" (an unknown symbol is dropped: it is a formula's, not text)."""
    if glyph_name is not None:
        found = character_of(glyph_name)
        if found is not None:
            return found
    encoding = encoding_of(base_font)
    return encoding.get(code, "") if encoding is not None else ""
