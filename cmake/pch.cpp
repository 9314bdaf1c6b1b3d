// An empty file: the target that builds the shared precompiled headers needs one source (cmake/Ladder.cmake).
