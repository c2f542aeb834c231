"""OCR: reading the text of pages that have no trustworthy text layer, and of pictures.

Two engines behind one result type (:class:`~papersift.ocr.reading.OcrReading`):
Tesseract, run in process through pytesseract from the binary of the container image
(or of the system), and Amazon Textract, through a boto3 client the caller passes in.
Which engine reads a page, in which order, is the OCR mode's decision (Settings.ocr_mode,
overridable per upload); the page's verdict comes from the same ``quality`` rules as any
text layer, plus the engine's own word confidence.

Pure like the rest of the core: no client is created here and no environment is read.
"""
