"""The workflow's steps, one module per Lambda step (plan, unpack, extract, ocr_plan, ocr,
assemble), each a plain function over an ObjectStore that its handler in ``functions/<step>/app.py``
calls once; ``contracts`` holds the models they take and return (the Step Functions state).
``papersift.pipeline`` chains the same functions in one process for `papersift extract`."""
