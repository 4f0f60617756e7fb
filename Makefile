# The front door. `make demo` and `make test` install what they need first.
BUILD ?= build

.PHONY: all demo test format clean

all:
	scripts/setup.sh
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTL_BUILD_TESTS=ON >/dev/null
	cmake --build $(BUILD)

demo: all
	scripts/demo.sh $(BUILD)

test:
	scripts/test.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan
