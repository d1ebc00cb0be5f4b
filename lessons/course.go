package lessons

import (
	"context"
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/ratelab/ratelab/internal/wording"
)

// course holds the built-in lessons, one file each, in the order course.txt lists them.
//
//go:embed course/*.yaml course/order.txt
var course embed.FS

var (
	courseOnce    sync.Once
	courseLessons []*Lesson
	courseErr     error
)

// Course is the built-in lessons, in teaching order. They are loaded (every answer computed,
// every goal checked) once, on first use: a few hundred milliseconds.
func Course() ([]*Lesson, error) {
	courseOnce.Do(func() {
		order, err := course.ReadFile("course/order.txt")
		if err != nil {
			courseErr = err
			return
		}
		for _, name := range strings.Fields(string(order)) {
			file := path.Join("course", name+".yaml")
			data, err := course.ReadFile(file)
			if err != nil {
				courseErr = err
				return
			}
			l, err := Load(context.Background(), file, data)
			if err != nil {
				courseErr = err
				return
			}
			if l.Name != name {
				courseErr = fmt.Errorf("%s: name %s is not the file's name", file, l.Name)
				return
			}
			courseLessons = append(courseLessons, l)
		}
	})
	return courseLessons, courseErr
}

// Names is the built-in lessons' names, in teaching order.
func Names() []string {
	order, _ := course.ReadFile("course/order.txt")
	return strings.Fields(string(order))
}

// Get is the built-in lesson called name, or an error naming the lessons there are.
func Get(name string) (*Lesson, error) {
	all, err := Course()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(l *Lesson) bool { return l.Name == name })
	if i < 0 {
		names := Names()
		return nil, fmt.Errorf("no built-in lesson %q%s (lessons: %s; or a lesson file, NAME.yaml)", name, wording.DidYouMeanTypo(name, names), strings.Join(names, ", "))
	}
	return all[i], nil
}
