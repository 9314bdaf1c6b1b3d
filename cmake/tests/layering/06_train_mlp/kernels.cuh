// An empty header for the planted includes to point at.
#pragma once
